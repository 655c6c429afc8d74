"""ngc-builder: an open, NGC-style builder of deep learning framework containers."""

from __future__ import annotations

__version__ = "0.1.0"
