"""Entry points and the composition root: the CLI, the Python API, doctor, export, the memory
browser command, the bootstrap every server process runs and the dependency-injector container."""
