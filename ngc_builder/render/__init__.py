"""Stage 3, render: Dockerfiles and build contexts, byte-identical for the same input, and the
content keys of what they build."""
