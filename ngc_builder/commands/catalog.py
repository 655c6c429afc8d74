"""`ngc-builder catalog YY.MM`: the release's catalog, a static site made from its archive
(`archive/<YY.MM>/`) and, when given or found, the release record of the run that published it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.catalog.extract import build_catalog
from ngc_builder.catalog.model import EXPECTED_FAILURE, PUBLISHED, Catalog
from ngc_builder.catalog.render import write_site
from ngc_builder.catalog.source import load_sources
from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.records.archive import RECORD_DIR, release_dir
from ngc_builder.records.record import record_path


@dataclass(frozen=True)
class CatalogOptions:
    release: str  # YY.MM
    archive_dir: Path = Path("archive")
    out: Path | None = None  # default: <build_dir>/<release>/catalog
    build_dir: Path = Path("build")
    # default: archive/<release>/record/release.json, else <build_dir>/<release>/release.json
    record: Path | None = None
    as_json: bool = False


def default_record(options: CatalogOptions) -> Path:
    """The record `report` archived with the release (the published run), else the build's."""
    archived = release_dir(options.archive_dir, options.release) / RECORD_DIR / "release.json"
    return archived if archived.is_file() else record_path(options.build_dir, options.release)


def catalog_command(options: CatalogOptions) -> int:
    record = options.record or default_record(options)
    sources = load_sources(options.archive_dir, options.release, record,
                           record_required=options.record is not None)
    catalog = build_catalog(sources)
    out = options.out or options.build_dir / options.release / "catalog"
    written = write_site(catalog, out)
    if options.as_json:
        print(json.dumps(summary(catalog, out, written), indent=2))
    else:
        print(f"wrote {out / 'index.html'} and {len(catalog.images)} image pages "
              f"({_counts(catalog)})")
    return EXIT_OK


def summary(catalog: Catalog, out: Path, written: list[Path]) -> dict[str, object]:
    return {"ok": True, "release": catalog.release, "previous": catalog.previous,
            "out": str(out), "index": str(out / "index.html"), "sources": list(catalog.sources),
            "images": [{"name": image.name, "state": image.state, "page": str(out / image.page),
                        "digest": image.digest,
                        "validation": image.validation.verdict} for image in catalog.images],
            "files": len(written)}


def _counts(catalog: Catalog) -> str:
    states = [image.state for image in catalog.images]
    return (f"{states.count(PUBLISHED)} published, {states.count(EXPECTED_FAILURE)} expected "
            f"failures, {len(states) - states.count(PUBLISHED) - states.count(EXPECTED_FAILURE)}"
            " not published")
