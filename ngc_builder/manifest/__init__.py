"""Stage 1, input: the release manifest, its OS bases and frameworks, checked (`file:line: field:
message`), and each framework wheel against its CUDA stack."""
