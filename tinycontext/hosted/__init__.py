"""Hosted mode's composition: its settings and their checks, one store per proven user (SQLite
files or PostgreSQL tenants), and its doctor checks."""
