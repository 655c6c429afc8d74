"""`python -m ngc_builder` is the same as `ngc-builder`."""

from __future__ import annotations

from .cli import main

main()
