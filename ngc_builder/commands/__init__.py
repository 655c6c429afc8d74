"""One module per CLI command: typed options and a function that returns the exit code."""
