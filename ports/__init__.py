"""The engine's ports: small Protocols that adapters and test fakes implement."""
