"""The PostgreSQL store (pgvector HNSW cosine search, tsvector keywords, row-level security per
tenant), its connection pool, schema upgrades and doctor checks. Implements ports.store."""
