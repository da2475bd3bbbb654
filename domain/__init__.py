"""Pure policies and value types of TinyContext: no I/O, no clock, no framework."""
