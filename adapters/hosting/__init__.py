"""Hosted mode's HTTP edge: the caller each request acts for (proxy-proven user ids), the
per-user service registry over SQLite files, and the Host/Origin guard both HTTP transports use."""
