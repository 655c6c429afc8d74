"""Stage 4, build: the OS base, one image through the engine, its package manifests and the size
gate."""
