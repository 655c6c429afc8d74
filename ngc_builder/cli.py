"""`ngc-builder`: parses options and dispatches to one command function each."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

import click

from ngc_builder import __version__
from ngc_builder.build.osbase import Strategy
from ngc_builder.commands.check import CheckOptions, check_command
from ngc_builder.commands.ci import CiOptions, ci_command
from ngc_builder.commands.fetch import FetchOptions, fetch_command
from ngc_builder.commands.guard import guarded
from ngc_builder.commands.lock import LockOptions, lock_command
from ngc_builder.commands.plan import PlanOptions, plan_command
from ngc_builder.commands.preflight import PreflightOptions, preflight_command
from ngc_builder.commands.rebuild import RebuildOptions, rebuild_command
from ngc_builder.commands.release import ReleaseOptions, release_command
from ngc_builder.commands.render import RenderOptions, render_command
from ngc_builder.commands.report import ReportOptions, report_command
from ngc_builder.commands.validate import (
    ValidateHostOptions,
    ValidateImageOptions,
    validate_host_command,
    validate_image_command,
)
from ngc_builder.commands.verify import VerifyOptions, verify_command
from ngc_builder.validate.baselines import DEFAULT_FILE as DEFAULT_BASELINES
from ngc_builder.validate.host import HostBaselines

MANIFEST = click.argument("manifest", type=click.Path(path_type=Path))
ROOT = click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
                    help="Project folder with frameworks/, base-images/, templates/ "
                         "(default: the manifest's folder's parent).")
JSON = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
REGISTRY = click.option("--registry", default=None,
                        help="Push to this registry (host[:port][/namespace]) instead of the "
                             "manifest's.")
OFFLINE = click.option("--offline", is_flag=True,
                       help="Skip the stack check (it reads wheel metadata from the index).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
    options = CheckOptions(manifest, root, offline, as_json)
    sys.exit(guarded(lambda: check_command(options), options.as_json))


OS_SOURCE = click.option("--os-source", type=click.Choice(["auto", "pull", "bootstrap"]),
                         default="auto", show_default=True,
                         help="How to get the OS base: pull it, or debootstrap it.")


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
    options = LockOptions(manifest, root, cast(Strategy, os_source), not offline, as_json,
                          only)
    sys.exit(guarded(lambda: lock_command(options), options.as_json))


@main.command()
@MANIFEST
@ROOT
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              envvar="NGC_CACHE_DIR",
              help="The package cache [env NGC_CACHE_DIR; default ~/.cache/ngc-builder/packages].")
@JSON
def fetch(manifest: Path, root: Path | None, cache_dir: Path | None, as_json: bool) -> None:
    """Download every file MANIFEST's lock names into the package cache (once; files already
    cached are not fetched again), for builds with no network."""
    options = FetchOptions(manifest, root, cache_dir, as_json)
    sys.exit(guarded(lambda: fetch_command(options), options.as_json))


BUILD_DIR = click.option("--build-dir", type=click.Path(path_type=Path), default=Path("build"),
                         show_default=True, help="Where contexts, logs, reports and records go.")


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
    options = VerifyOptions(manifest, root, registry, build_dir, as_json)
    sys.exit(guarded(lambda: verify_command(options), options.as_json))


@main.command()
@MANIFEST
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Folder for one Dockerfile + build context per image.")
@ROOT
@OFFLINE
@JSON
def render(manifest: Path, out: Path, root: Path | None, offline: bool, as_json: bool) -> None:
    """Render Dockerfiles and build contexts (byte-identical for the same input)."""
    options = RenderOptions(manifest, out, root, offline, as_json)
    sys.exit(guarded(lambda: render_command(options), options.as_json))


@main.command()
@MANIFEST
@click.option("--only", multiple=True, help="Only this image (and what it is built on).")
@REGISTRY
@click.option("--no-push", is_flag=True, help="Build and validate, push nothing.")
@ROOT
@BUILD_DIR
@OS_SOURCE
@click.option("--offline", is_flag=True,
              help="Hermetic: builds run on an internal network with no route out, and get "
                   "packages only from the cache (fill it first with `fetch`); no stack check.")
@click.option("--quiet", is_flag=True, help="Do not echo build logs (they are still saved).")
@click.option("--jobs", "-j", type=click.IntRange(1, 16), default=2, show_default=True,
              help="Images built, validated and pushed at the same time (siblings in the DAG).")
@click.option("--force", is_flag=True,
              help="Move release tags that already point at another digest (recorded).")
@click.option("--no-cache", is_flag=True,
              help="Build every image that is not published anew, without the layer cache.")
@JSON
def release(manifest: Path, only: tuple[str, ...], registry: str | None, no_push: bool,
            root: Path | None, build_dir: Path, os_source: str,
            offline: bool, quiet: bool, jobs: int, force: bool, no_cache: bool,
            as_json: bool) -> None:
    """Build, validate, push candidates and promote a release; end with a summary table.

    Images whose content key the registry already holds are neither built nor pushed."""
    options = ReleaseOptions(
        manifest=manifest, root=root, only=list(only), registry=registry, push=not no_push,
        build_dir=build_dir, os_strategy=cast(Strategy, os_source), offline=offline,
        stack_check=not offline, show_logs=not quiet, as_json=as_json, jobs=jobs, force=force,
        no_cache=no_cache)
    sys.exit(guarded(lambda: release_command(options), options.as_json))


@main.command()
@click.argument("image", required=False)
@click.option("--host", is_flag=True, help="Validate this Python environment, not an image.")
@click.option("--framework", default=None, help="With --host: the framework probe to run.")
@click.option("--version", "version", default=None,
              help="With --host: the framework version expected (default: installed).")
@click.option("--python", "python", default=None,
              help="With --host: the interpreter whose environment is validated (default: the "
                   "first of this one, python3 and python on PATH that imports the framework).")
@click.option("--release", "manifest", type=click.Path(path_type=Path), default=None,
              help="Release manifest whose labels the image must carry.")
@click.option("--root", type=click.Path(path_type=Path), default=Path("."), show_default=True,
              help="With --host: the project folder holding frameworks/.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("build/validate"),
              show_default=True, help="Folder for the JSON report and JUnit XML.")
@click.option("--junit", type=click.Path(path_type=Path), default=None,
              help="Also write JUnit XML here.")
@click.option("--baselines", "baselines_file", type=click.Path(path_type=Path), default=None,
              help="T3 floors and medians (default: ROOT/baselines/gpu.json).")
@click.option("--record-baseline", "record_as", default=None, metavar="YY.MM",
              help="With --host: compare with releases before YY.MM, then record the T3 "
                   "medians of a passing run as YY.MM's baseline.")
@JSON
def validate(image: str | None, host: bool, framework: str | None, version: str | None,
             python: str | None, manifest: Path | None, root: Path, out: Path,
             junit: Path | None,
             baselines_file: Path | None, record_as: str | None, as_json: bool) -> None:
    """Validate IMAGE inside a container, or this host with --host --framework NAME."""
    if host == (image is not None) or (host and framework is None):
        raise click.UsageError("give IMAGE, or --host with --framework NAME")
    if host:
        assert framework is not None
        baselines = HostBaselines(baselines_file or root / DEFAULT_BASELINES, record_as)
        host_options = ValidateHostOptions(framework, python, root, version, out, junit,
                                           as_json, baselines)
        sys.exit(guarded(lambda: validate_host_command(host_options), host_options.as_json))
    assert image is not None
    image_options = ValidateImageOptions(image, manifest, out, junit, as_json,
                                         baselines_file or root / DEFAULT_BASELINES)
    sys.exit(guarded(lambda: validate_image_command(image_options), image_options.as_json))


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
def report(manifest: Path, root: Path | None, build_dir: Path, out: Path, as_json: bool,
           notes: Path | None, archive_dir: Path) -> None:
    """Write the support matrix and the release notes (with the package diff against the
    previous release) from the release record, and archive the release; --json prints the
    record."""
    options = ReportOptions(manifest, root, build_dir, out, as_json,
                            notes or Path("docs/release-notes"), archive_dir)
    sys.exit(guarded(lambda: report_command(options), options.as_json))


@main.command()
@click.argument("release_id", metavar="YY.MM")
@click.option("--archive", "archive_dir", type=click.Path(path_type=Path), default=Path("archive"),
              show_default=True, help="Archive of published releases.")
@ROOT
@REGISTRY
@BUILD_DIR
@click.option("--fresh", is_flag=True,
              help="Build every image anew, even those the registry still holds.")
@click.option("--jobs", "-j", type=click.IntRange(1, 16), default=2, show_default=True)
@JSON
def rebuild(release_id: str, archive_dir: Path, root: Path | None, registry: str | None,
            build_dir: Path, fresh: bool, jobs: int, as_json: bool) -> None:
    """Rebuild a retired release from its archived manifest and the project files of its
    revision, to the same tags (moved on purpose); changed digests are noted in the archive."""
    options = RebuildOptions(release_id, archive_dir, root, registry, build_dir, fresh, jobs,
                             as_json)
    sys.exit(guarded(lambda: rebuild_command(options), options.as_json))


@main.command()
@MANIFEST
@ROOT
@click.option("--out-dir", type=click.Path(path_type=Path, file_okay=False), default=Path("ci"),
              show_default=True, help="Where the pipeline files go.")
@click.option("--check", is_flag=True, help="Compare instead of writing; exit 1 when stale.")
def ci(manifest: Path, root: Path | None, out_dir: Path, check: bool) -> None:
    """Generate the monthly-build pipelines (GitHub Actions, GitLab CI): one job per image,
    needing its parent's job."""
    options = CiOptions(manifest, root, out_dir, check)
    sys.exit(guarded(lambda: ci_command(options)))


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
    options = PreflightOptions(min_driver, manifest, junit, as_json)
    sys.exit(guarded(lambda: preflight_command(options), options.as_json))
