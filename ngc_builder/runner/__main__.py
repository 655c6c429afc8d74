"""Entry point: ``python -m ngc_runner`` in images, ``python -m ngc_builder.runner`` on a host."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
