"""A release's timeline from its record: each image's build, validation and push, when each
started and ended (seconds from the run's start), longest-running last, with a bar per step.

Each step's record holds its `seconds` and when it `ended` (to the second), so a step started at
`ended - seconds`. The critical path is read off the chart: the step that ends last, and what it
waited for (its parent's push, its own validation). Read it for one run into a fresh build
folder, as `make bench` runs: a resumed run keeps its first run's start and that run's steps.

Usage: .venv/bin/python bench/timeline.py build/26.12/release.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

STEPS = ("build", "validation", "push")
COLUMNS = 60


class Step(NamedTuple):
    image: str
    step: str
    start: float
    end: float


def _moment(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def steps_of(record: dict[str, Any]) -> list[Step]:
    """Every step this run did (reused ones took no time and are left out), by start."""
    origin = _moment(record["started"])
    found = []
    for image, entry in record["images"].items():
        for step in STEPS:
            part = entry.get(step) or {}
            if part.get("ended") and part.get("seconds") is not None and not part.get("reused"):
                end = (_moment(part["ended"]) - origin).total_seconds()
                found.append(Step(image, step, max(0.0, end - part["seconds"]), end))
    return sorted(found, key=lambda step: (step.start, step.end))


def chart(steps: list[Step]) -> str:
    if not steps:
        return "no step of this run has a recorded end (a record older than bench/timeline.py?)"
    span = max(step.end for step in steps) or 1.0
    rows = []
    for step in steps:
        first, last = (round(value / span * COLUMNS) for value in (step.start, step.end))
        bar = " " * first + "#" * max(1, last - first)
        rows.append(f"{step.image:>22} {step.step:<10} {step.start:6.0f} {step.end:6.0f} "
                    f"{step.end - step.start:5.0f} s |{bar:<{COLUMNS}}|")
    final = max(steps, key=lambda step: step.end)
    rows.append(f"ends last: {final.image} {final.step} at {final.end:.0f} s")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", type=Path)
    args = parser.parse_args()
    print(chart(steps_of(json.loads(args.record.read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
