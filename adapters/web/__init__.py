"""The memory browser (`tinycontext ui`): server-rendered pages over the MemoryService."""
