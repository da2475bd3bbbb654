"""The SQLite store: one file per store, sqlite-vec vectors, FTS5 keywords, salvage of damaged
files. Implements ports.store; imports nothing of the other adapter families."""
