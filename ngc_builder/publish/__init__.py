"""Stage 6, publish: push a candidate to a staging tag, promote it, verify the tags."""
