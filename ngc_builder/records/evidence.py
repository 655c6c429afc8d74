"""The one place a path that a record names becomes a file to read or copy.

A release record (and the copy archived in git) names each image's build log, validation
report and package manifest. A pull request can edit an archived record, and a build folder
is an input too: a log "at" `~/.docker/config.json` would be printed into the catalog and
copied into the archive by the maintainer who regenerates them. So a recorded path is only
ever read as `logs/NAME` or `reports/NAME` inside the record's own folder (where every run
writes them, and where the archive keeps its copies), whatever folders it names before that;
anything else, and a link that leads out of the folder, is an input error naming the record
and the field, raised before anything is written.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ngc_builder.errors import CONTROL, InputError, Problem
from ngc_builder.records.record import ReleaseRecord

KINDS = ("logs", "reports")


def evidence_file(folder: Path, recorded: str | None, where: Path, field: str) -> Path | None:
    """The file `recorded` names inside `folder` (the record's folder), or None when the
    record names none or it is not there; InputError when it would lead anywhere else."""
    if not recorded:
        return None
    path = PurePosixPath(recorded)
    if path.parent.name not in KINDS or path.name in ("", ".", "..") or CONTROL.search(recorded):
        raise _outside(where, field, recorded, "is not a file in logs/ or reports/")
    candidate = folder / path.parent.name / path.name
    if not candidate.exists() and not candidate.is_symlink():
        return None
    real = candidate.resolve()
    if not real.is_relative_to(folder.resolve()) or not real.is_file():
        raise _outside(where, field, recorded, "leads out of the record's folder")
    return real


def check_evidence(record: ReleaseRecord, folder: Path, where: Path) -> None:
    """Every path `record` names, each image's, checked before a report or an archive is
    written from it (all problems at once)."""
    problems: list[Problem] = []
    for name, image in sorted(record.images.items()):
        for field, recorded in ((f"images.{name}.build.log", image.build.log),
                                (f"images.{name}.build.packages", image.build.packages),
                                (f"images.{name}.validation.report", image.validation.report)):
            try:
                evidence_file(folder, recorded, where, field)
            except InputError as exc:
                problems += exc.problems
    if problems:
        raise InputError(problems)


def _outside(where: Path, field: str, recorded: str, why: str) -> InputError:
    shown = recorded if len(recorded) <= 120 else recorded[:120] + "..."
    return InputError([Problem(str(where), 1, field, f"{shown!r} {why} (not read)")])
