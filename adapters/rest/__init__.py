"""The FastAPI REST API: routes, request/response models, error responses, request spans.
The app a server runs is `tinycontext.rest:app` (built by the composition in tinycontext.rest)."""
