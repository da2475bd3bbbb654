"""The application core: the use cases over the ports.

- service.py: MemoryService, the six typed operations (the Python API, tinycontext.entry.api,
  returns their dicts), the management queries and export/import entry points;
- core.py: what every use case shares (ports, settings, model key, token cost, id/ref lookup);
- saving.py, recalling.py, browsing.py, editing.py: the operations' work;
- queries.py: management queries; transfer.py: JSON Lines export/import (the record format is
  domain/records.py);
- reindex.py: background re-embedding; vectors.py: vector arithmetic; redacting.py: secrets;
- results.py: the typed results every transport reads; rendering.py: what a transport frames
  a returned memory with (what a recall budget counts; MCP's frame is adapters/mcp/frame.py).

Importing this package loads nothing else: import the module you need.
"""
