"""The monthly bump: the next release's framework versions and the CUDA stacks they stand on.

`index.py` lists what an index holds for an image's Python and platform, `track.py` picks each
row's framework version, `repin.py` re-pins one CUDA stack for the frameworks on it, `plan.py`
ties them together for a release and `describe.py` says what changed, one line each.
"""
