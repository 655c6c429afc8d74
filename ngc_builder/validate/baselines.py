"""T3 baselines the project keeps (``baselines/gpu.json``): per GPU model the datasheet peaks
that set absolute floors, and per release the measured medians that next month's run is held
to (0.93 x the median for the same GPU model, driver branch and image lineage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import DATA_LIMIT, read_text, write_atomic
from ngc_builder.runner.report import RunReport
from ngc_builder.validate.hostrun import floors_of, runner_baselines

DEFAULT_FILE = Path("baselines") / "gpu.json"


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    release: str
    gpu: str
    driver_branch: str | None
    lineage: str
    metric: str
    unit: str
    median: float
    samples: list[float]

    @property
    def key(self) -> tuple[str, str, str | None, str, str]:
        return self.release, self.gpu, self.driver_branch, self.lineage, self.metric


class BaselineBook(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Where the peaks come from; floors are floor_fraction x peak.
    peak_source: str = ""
    floor_fraction: float = Field(default=0.5, gt=0, le=1)
    peaks: dict[str, dict[str, float]] = Field(default_factory=dict)
    entries: list[Entry] = Field(default_factory=list)

    def floors(self) -> dict[str, dict[str, float]]:
        return floors_of(self.peaks, self.floor_fraction)


def load_book(path: Path) -> BaselineBook:
    if not path.is_file():
        return BaselineBook()
    try:
        return BaselineBook.model_validate(json.loads(read_text(path, DATA_LIMIT)))
    except (OSError, ValueError) as exc:
        field = ""
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            field, message = ".".join(str(p) for p in first["loc"]), first["msg"]
        else:
            message = str(exc)
        raise InputError([Problem(str(path), 1, field or "baselines", message)]) from None


def runner_document(book: BaselineBook, lineage: str, release: str | None) -> dict[str, Any]:
    """What the runner needs (NGC_BASELINES): floors, and this lineage's medians from earlier
    releases (a rerun of a release is not compared with itself)."""
    return runner_baselines(book.model_dump(), lineage, release)


def measurements(report: RunReport, lineage: str, release: str) -> list[Entry]:
    """The medians of the T3 checks that passed, as baseline entries."""
    found = []
    for check in report.checks:
        measured = check.evidence.get("measurement")
        if check.tier != "T3" or check.status != "pass" or not isinstance(measured, dict):
            continue
        found.append(Entry(release=release, gpu=measured["gpu"],
                           driver_branch=measured.get("driver_branch"), lineage=lineage,
                           metric=measured["metric"], unit=measured["unit"],
                           median=measured["median"], samples=measured["samples"]))
    return found


def record(path: Path, new: list[Entry]) -> int:
    """Add (or replace, for a rerun of the same release) entries; returns how many."""
    if not new:
        return 0
    book = load_book(path)
    replaced = {entry.key for entry in new}
    kept = [entry for entry in book.entries if entry.key not in replaced]
    ordered = sorted(kept + new, key=lambda e: (e.release, e.lineage, e.gpu, e.metric))
    book = book.model_copy(update={"entries": ordered})
    write_atomic(path, json.dumps(book.model_dump(), indent=2) + "\n")
    return len(new)
