"""Optional OpenTelemetry: setting it up (setup.py), the traced service and ports, and the policy
that keeps memory content, queries and user ids out of every span and metric."""
