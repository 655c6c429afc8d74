"""Stdlib-only validation runner that ships into every image (as the top-level ``ngc_runner``).

Keep this package free of third-party imports and of absolute imports of itself: it runs in
bare images and on GPU hosts that have nothing but Python and the framework under test.
"""

from __future__ import annotations

from .report import CheckResult, RunReport
from .suite import CheckFailed, CheckSkipped, Context, Suite

__all__ = ["CheckFailed", "CheckResult", "CheckSkipped", "Context", "RunReport", "Suite"]
