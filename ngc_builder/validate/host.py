"""Host mode from the full CLI (`ngc-builder validate --host`): the stdlib host run
(`validate.hostrun`) with the project's baselines checked by their model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder.validate.baselines import load_book, runner_document


@dataclass(frozen=True)
class HostBaselines:
    """T3 in host mode: the project's baseline file, and the release to record medians as."""

    file: Path
    record_as: str | None = None


def baseline_document(baselines: HostBaselines | None, lineage: str) -> dict[str, Any] | None:
    """What the runner is held to for `lineage` (None: no T3 thresholds beyond the floors)."""
    if baselines is None:
        return None
    return runner_document(load_book(baselines.file), lineage, baselines.record_as)
