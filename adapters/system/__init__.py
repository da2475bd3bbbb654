"""The operating system's services: the wall clock and returning freed heap to the OS."""
