"""Adapters: infrastructure implementations of the ports, and the inbound transports."""
