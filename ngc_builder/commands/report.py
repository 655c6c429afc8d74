"""`ngc-builder report MANIFEST`: the support matrix, the release notes (with the package diff
against the previous archived release) and the archive, all from the release record; or, with
--timeline, the last run's steps on one clock and nothing written."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.errors import InputError, Problem
from ngc_builder.files import write_atomic
from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.publish.cosign_keys import public_pem, verifying_key
from ngc_builder.records import archive
from ngc_builder.records.evidence import check_evidence
from ngc_builder.records.matrix import support_matrix
from ngc_builder.records.notes import release_notes
from ngc_builder.records.record import ReleaseRecord, load_record, record_path
from ngc_builder.records.timeline import render_timeline, timeline_json
from ngc_builder.services.registry import Registry, parse_registry


@dataclass(frozen=True)
class ReportOptions:
    manifest: Path
    root: Path | None = None
    build_dir: Path = Path("build")
    out: Path = Path("docs/support-matrix.md")
    as_json: bool = False
    notes: Path | None = None  # a folder (one file per release) or a .md file
    archive_dir: Path | None = None
    timeline: bool = False  # print the last run's timeline instead of writing the reports


def report_command(options: ReportOptions, registry: Registry | None = None) -> int:
    """`registry`: where the notes measure the release's bytes (default: the record's)."""
    loaded = load_release(options.manifest, options.root)
    path = record_path(options.build_dir, loaded.release.release_id)
    record = load_record(path)
    if record is None:
        raise InputError([Problem(str(path), 1, "(record)",
                                  "no release record: run `ngc-builder release` first")])
    if options.timeline:  # reads no evidence file and writes nothing
        return _print_timeline(record, options.as_json)
    check_evidence(record, path.parent, path)  # before the matrix, the archive or the notes
    if options.as_json:
        print(record.model_dump_json(indent=2))
        return EXIT_OK
    # Everything made before anything is written: a bad registry or an unreachable one
    # leaves no matrix without its notes, and no archive without either.
    matrix = support_matrix(loaded, record, path)
    notes = _notes(options, loaded, record, path, registry) if options.notes else None
    options.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(options.out, matrix)
    print(f"wrote {options.out}")
    if options.archive_dir is not None:
        print(f"archived {archive.write(options.archive_dir, options.manifest, record, path)}")
    if notes is not None:
        target, text = notes
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, text)
        print(f"wrote {target}")
        _write_public_key(target.with_name(f"{record.release}.cosign.pub"))
    return EXIT_OK


def _print_timeline(record: ReleaseRecord, as_json: bool) -> int:
    print(json.dumps(timeline_json(record), indent=2) if as_json else render_timeline(record))
    return EXIT_OK


def _write_public_key(path: Path) -> None:
    """The key the release's signatures verify with, beside its notes (docs/signing.md)."""
    public, _ = verifying_key()
    if public is not None:
        write_atomic(path, public_pem(public))
        print(f"wrote {path}")


def _notes(options: ReportOptions, loaded: LoadedRelease, record: ReleaseRecord,
           record_file: Path, registry: Registry | None) -> tuple[Path, str]:
    """Where the release notes go, and their text."""
    assert options.notes is not None
    notes = options.notes
    target = notes / f"{record.release}.md" if notes.suffix != ".md" else notes
    archive_dir = options.archive_dir or archive.DEFAULT_DIR
    measured = registry or _record_registry(record, record_file)
    return target, release_notes(loaded, record, record_file, archive_dir, measured)


def _record_registry(record: ReleaseRecord, path: Path) -> Registry:
    try:
        return parse_registry(record.registry)
    except ValueError as exc:
        raise InputError([Problem(str(path), 1, "registry", str(exc))]) from None
