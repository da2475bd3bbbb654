"""Configuration: the engine's settings model (engine.py), the layered settings of server
processes (settings.py: the JSON file and TINYCONTEXT_* variables) and the Host names a server
accepts."""
