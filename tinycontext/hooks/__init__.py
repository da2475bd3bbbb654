"""Automatic recall in an agent's lifecycle: `tinycontext hook <event>`, `tinycontext context`
and the local memory service they talk to (`tinycontext service`).

The hook side (command, client, locate) imports only the standard library: it runs once per
prompt and must start in milliseconds. The service side (server, responder) holds the store
and the model, started on demand and shared by every agent that names the same store.
"""
