"""`ngc-builder`: parses options and dispatches to one command function each."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ngc_builder import __version__, clock  # noqa: F401  (the timeline's zero: clock.STARTED)
from ngc_builder.cli_node import check_host, squashfs
from ngc_builder.cli_options import (
    BUILD_DIR,
    CACHE_DIR,
    JSON,
    MANIFEST,
    OFFLINE,
    OS_SOURCE,
    REGISTRY,
    ROOT,
)
from ngc_builder.cli_run import ci, release, validate
from ngc_builder.commands.guard import guarded
from ngc_builder.redact import redacted_output

if TYPE_CHECKING:
    from ngc_builder.assemble.osbase import Strategy

# Each command imports its own module when it runs: `release` answers a no-op re-run in less
# time than importing every command's modules would take (pipeline/noop.py).


class CleanedGroup(click.Group):
    """Click prints its own errors (`Got unexpected extra argument (ARG)`, ARG as given)
    before any command's guard runs: they go through the same cleaned streams."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with redacted_output():
            return super().main(*args, **kwargs)


@click.group(cls=CleanedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ngc-builder")
def main() -> None:
    """Build, validate and publish NGC-style deep learning containers from a release manifest.

    \b
    Exit codes: 0 success, 1 a failed image or check, 2 bad input.
    """


@main.command()
@MANIFEST
@ROOT
@OFFLINE
@JSON
def check(manifest: Path, root: Path | None, offline: bool, as_json: bool) -> None:
    """Check a release manifest and its stacks; print every problem as file:line: field."""
    from ngc_builder.commands.check import CheckOptions, check_command
    options = CheckOptions(manifest, root, offline, as_json)
    sys.exit(guarded(lambda: check_command(options), options.as_json))


@main.command()
@MANIFEST
@ROOT
@OS_SOURCE
@click.option("--only", multiple=True,
              help="Re-resolve only this image; every other image keeps its locked packages.")
@OFFLINE
@JSON
def lock(manifest: Path, root: Path | None, os_source: str, only: tuple[str, ...],
         offline: bool, as_json: bool) -> None:
    """Resolve every image's Python and Debian packages, exact files and hashes, into
    MANIFEST's lock (releases/YY.MM.lock.json): builds install exactly the lock."""
    from ngc_builder.commands.lock import LockOptions, lock_command
    options = LockOptions(manifest, root, cast("Strategy", os_source), not offline, as_json,
                          only)
    sys.exit(guarded(lambda: lock_command(options), options.as_json))


@main.command()
@MANIFEST
@ROOT
@CACHE_DIR
@JSON
def fetch(manifest: Path, root: Path | None, cache_dir: Path | None, as_json: bool) -> None:
    """Download every file MANIFEST's lock names into the package cache (once; files already
    cached are not fetched again), for builds with no network."""
    from ngc_builder.commands.fetch import FetchOptions, fetch_command
    options = FetchOptions(manifest, root, cache_dir, as_json)
    sys.exit(guarded(lambda: fetch_command(options), options.as_json))


@main.command()
@MANIFEST
@ROOT
@REGISTRY
@BUILD_DIR
@JSON
def plan(manifest: Path, root: Path | None, registry: str | None, build_dir: Path,
         as_json: bool) -> None:
    """Dry run: per image, build / reuse / skip and push / promote, and why (which input
    changed since the recorded build, what the registry already holds)."""
    from ngc_builder.commands.plan import PlanOptions, plan_command
    options = PlanOptions(manifest, root, registry, build_dir, as_json)
    sys.exit(guarded(lambda: plan_command(options), options.as_json))


@main.command()
@MANIFEST
@ROOT
@REGISTRY
@BUILD_DIR
@JSON
def verify(manifest: Path, root: Path | None, registry: str | None, build_dir: Path,
           as_json: bool) -> None:
    """Check through the registry API that every planned tag exists and points at the digest
    in the release record; a missing or moved tag exits 1."""
    from ngc_builder.commands.verify import VerifyOptions, verify_command
    options = VerifyOptions(manifest, root, registry, build_dir, as_json)
    sys.exit(guarded(lambda: verify_command(options), options.as_json))


@main.command()
@MANIFEST
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Folder for one Dockerfile + build context per image.")
@ROOT
@OFFLINE
@click.option("--one-install-layer", is_flag=True,
              help="Each image's wheels in one layer, as rendered before the split into "
                   "layers per family (the benchmark's naive baseline; never released).")
@JSON
def render(manifest: Path, out: Path, root: Path | None, offline: bool,
           one_install_layer: bool, as_json: bool) -> None:
    """Render Dockerfiles and build contexts (byte-identical for the same input)."""
    from ngc_builder.commands.render import RenderOptions, render_command
    options = RenderOptions(manifest, out, root, offline, as_json, one_install_layer)
    sys.exit(guarded(lambda: render_command(options), options.as_json))


@main.command()
@MANIFEST
@ROOT
@click.option("--build-dir", type=click.Path(path_type=Path), default=Path("build"),
              show_default=True, help="Where the release record is.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("docs/support-matrix.md"),
              show_default=True, help="The Markdown support matrix to write.")
@JSON
@click.option("--notes", type=click.Path(path_type=Path), default=None,
              help="Release notes to write [default: docs/release-notes/<YY.MM>.md].")
@click.option("--archive", "archive_dir", type=click.Path(path_type=Path),
              default=Path("archive"), show_default=True,
              help="Archive of published releases: this one is added, the previous one is "
                   "what the notes compare with.")
@click.option("--timeline", is_flag=True,
              help="Only print the last run's timeline: each image's and worker's steps on "
                   "one clock, how many ran at once, the critical path (with --json: as "
                   "JSON). Writes nothing.")
def report(manifest: Path, root: Path | None, build_dir: Path, out: Path, as_json: bool,
           notes: Path | None, archive_dir: Path, timeline: bool) -> None:
    """Write the support matrix and the release notes (with the package diff against the
    previous release) from the release record, and archive the release; --json prints the
    record; --timeline prints the last run's timeline instead."""
    from ngc_builder.commands.report import ReportOptions, report_command
    options = ReportOptions(manifest, root, build_dir, out, as_json,
                            notes or Path("docs/release-notes"), archive_dir, timeline)
    sys.exit(guarded(lambda: report_command(options), options.as_json))


@main.command()
@click.argument("release_id", metavar="YY.MM")
@click.option("--archive", "archive_dir", type=click.Path(path_type=Path), default=Path("archive"),
              show_default=True, help="Archive of published releases.")
@ROOT
@REGISTRY
@BUILD_DIR
@click.option("--fresh", is_flag=True,
              help="Build every layer anew: neither the registry's images nor the "
                   "engine's cache.")
@click.option("--jobs", "-j", type=click.IntRange(1, 16), default=2, show_default=True)
@JSON
def rebuild(release_id: str, archive_dir: Path, root: Path | None, registry: str | None,
            build_dir: Path, fresh: bool, jobs: int, as_json: bool) -> None:
    """Rebuild a retired release from its archived manifest and the project files of its
    revision, to the same tags (moved on purpose); changed digests are noted in the archive."""
    from ngc_builder.commands.rebuild import RebuildOptions, rebuild_command
    options = RebuildOptions(release_id, archive_dir, root, registry, build_dir, fresh, jobs,
                             as_json)
    sys.exit(guarded(lambda: rebuild_command(options), options.as_json))


@main.command()
@click.option("--min-driver", default=None, help="The oldest NVIDIA driver to accept.")
@click.option("--release", "manifest", type=click.Path(path_type=Path), default=None,
              help="Take the minimum driver from this release's CUDA stacks (the strictest).")
@click.option("--junit", type=click.Path(path_type=Path), default=None,
              help="Also write JUnit XML here.")
@JSON
def preflight(min_driver: str | None, manifest: Path | None, junit: Path | None,
              as_json: bool) -> None:
    """T1 host preflight through NVML: driver, GPUs, ECC, remapped rows, clocks, processes."""
    from ngc_builder.commands.preflight import PreflightOptions, preflight_command
    options = PreflightOptions(min_driver, manifest, junit, as_json)
    sys.exit(guarded(lambda: preflight_command(options), options.as_json))


@main.command()
@MANIFEST
@click.option("--to", "to", required=True, metavar="YY.MM", help="The new release's id.")
@click.option("--report", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Also write the proposal in Markdown here (a merge request's description).")
@click.option("--force", is_flag=True, help="Replace an existing YY.MM.yaml.")
@click.option("--no-lock", "no_lock", is_flag=True,
              help="Write the manifest only (`lock` it later).")
@JSON
def bump(manifest: Path, to: str, report: Path | None, force: bool, no_lock: bool,
         as_json: bool) -> None:
    """Propose release YY.MM from MANIFEST and what the index holds today: each framework at
    its newest version that fits its row (track:, Python, CUDA major), each CUDA stack
    re-pinned to versions every framework on it accepts; then lock it. Exit 1 when a stack
    cannot be satisfied (the conflicting requirements named), nothing written."""
    from ngc_builder.commands.bump import BumpOptions, bump_command
    from ngc_builder.commands.lock import LockOptions, lock_command
    options = BumpOptions(manifest, to, report, force, not no_lock, as_json)
    sys.exit(guarded(lambda: bump_command(
        options, lambda path, moved: lock_command(LockOptions(path, only=tuple(moved)))),
        options.as_json))


@main.command()
@MANIFEST
@ROOT
@CACHE_DIR
@click.option("--report", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Also write the findings in Markdown here (a patch release's description).")
@click.option("--patch", is_flag=True, help="Write the next patch release (YY.MM.N) beside "
              "MANIFEST: only the fixed .debs relocked.")
@click.option("--follow", is_flag=True, help="With --patch: the monthly tag (YY.MM-py3) moves "
              "to the patch's images too (recorded as an alias in its manifest).")
@click.option("--force", is_flag=True, help="Replace a patch release written before.")
@JSON
def security(manifest: Path, root: Path | None, cache_dir: Path | None, report: Path | None,
             patch: bool, follow: bool, force: bool, as_json: bool) -> None:
    """Which locked .debs of MANIFEST's lock the OS's security suite has fixed since, and the
    CVEs each fix's changelog names (signed index checked by gpgv; .debs hash-checked)."""
    from ngc_builder.commands.security import SecurityOptions, security_command
    options = SecurityOptions(manifest, root, cache_dir, report, as_json, patch, follow, force)
    sys.exit(guarded(lambda: security_command(options), options.as_json))


@main.command()
@click.argument("release_id", metavar="YY.MM")
@click.option("--archive-dir", "archive_dir", type=click.Path(path_type=Path),
              default=Path("archive"), show_default=True,
              help="Archive of published releases (archive/<YY.MM>/).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for the site [default: BUILD_DIR/<YY.MM>/catalog].")
@BUILD_DIR
@click.option("--record", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The release record with validation, sizes and failure evidence "
                   "[default: the one archived with the release, else "
                   "BUILD_DIR/<YY.MM>/release.json].")
@JSON
def catalog(release_id: str, archive_dir: Path, out: Path | None, build_dir: Path,
            record: Path | None, as_json: bool) -> None:
    """A static site (no server, works offline) to choose an image of release YY.MM: every
    image with search and filters, and per image its pull command by digest, components,
    validation per tier with evidence, packages and changes since the previous release."""
    from ngc_builder.commands.catalog import CatalogOptions, catalog_command
    options = CatalogOptions(release_id, archive_dir, out, build_dir, record, as_json)
    sys.exit(guarded(lambda: catalog_command(options), options.as_json))


main.add_command(release)
main.add_command(validate)
main.add_command(ci)
main.add_command(check_host)
main.add_command(squashfs)
