"""Hosted mode's HTTP edge: the caller each request acts for (proxy-proven user ids) and the
per-user service registry over SQLite files."""
