"""`python -m ngc_builder` is the same as `ngc-builder`."""

from __future__ import annotations

from ngc_builder.cli import main

main()
