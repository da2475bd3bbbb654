"""Local models: the ONNX embedders (presets, int8 rewrite, token rows) and the tiktoken token
counter, with the bundled tokenizer file in data/. Implements ports.embedder, ports.tokenizer."""
