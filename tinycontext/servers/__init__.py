"""Import paths of an earlier release's servers, kept so their `uvicorn` commands still work."""
