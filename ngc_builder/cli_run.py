"""The commands of a release run: `release`, `validate` and `ci` (registered by cli.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ngc_builder.cli_options import BUILD_DIR, JSON, MANIFEST, OS_SOURCE, REGISTRY, ROOT, SITE
from ngc_builder.commands.guard import guarded
from ngc_builder.commands.release import ReleaseOptions, release_command
from ngc_builder.manifest.platforms import MACHINES, others
from ngc_builder.pipeline.options import RunPolicy

if TYPE_CHECKING:
    from ngc_builder.assemble.osbase import Strategy


@click.command()
@MANIFEST
@click.option("--only", multiple=True, help="Only this image (and what it is built on).")
@REGISTRY
@click.option("--no-push", is_flag=True, help="Build and validate, push nothing.")
@click.option("--no-promote", is_flag=True,
              help="Push each candidate and stage it by its content key (tag staged-<key>), "
                   "move no release tag: a later run (a GPU job) pulls it, gates it again and "
                   "promotes it.")
@click.option("--defer-validation", "deferred", multiple=True,
              type=click.Choice(others(MACHINES)),
              help="With --no-promote: build this platform but leave its validation to a job "
                   "on its own nodes (release --on slurm does, in the site's arm64_partition); "
                   "its record says `deferred` and nothing is promoted before that job passed.")
@ROOT
@BUILD_DIR
@OS_SOURCE
@click.option("--offline", is_flag=True,
              help="Hermetic: builds run on an internal network with no route out, and get "
                   "packages only from the cache (fill it first with `fetch`); no stack check.")
@click.option("--quiet", is_flag=True, help="Do not echo build logs (they are still saved).")
@click.option("--jobs", "-j", type=click.IntRange(1, 16), default=3, show_default=True,
              help="Images built, validated and pushed at the same time (siblings in the DAG).")
@click.option("--force", is_flag=True,
              help="Move release tags that already point at another digest (recorded).")
@click.option("--no-cache", is_flag=True,
              help="Build every image that is not published anew, without the layer cache.")
@SITE
@click.option("--validate-on", type=click.Choice(["engine", "slurm"]), default="engine",
              show_default=True,
              help="Where images are validated: on their build host's engine, or each as a job "
                   "of the site's Slurm cluster (slurm: in the site file), which pulls the "
                   "pushed candidate; release tags move only after the job passed.")
@click.option("--on", "on", type=click.Choice(["engine", "slurm"]), default="engine",
              show_default=True,
              help="Where images are built: on this host's engine, or each as a job of the "
                   "site's Slurm cluster (slurm: in the site file) on its node's engine, a "
                   "child's job after its parent's; this side waits, then promotes and signs.")
@JSON
def release(**flags: Any) -> None:
    """Build, validate, push candidates and promote a release; end with a summary table.

    Images whose content key the registry already holds are neither built nor pushed."""
    options = release_options(flags)
    sys.exit(guarded(lambda: release_command(options), options.as_json))


def release_options(flags: dict[str, Any]) -> ReleaseOptions:
    """The release's options from its command line: how it may act goes in its policy."""
    if flags["validate_on"] == "slurm" and flags["no_push"]:
        raise click.UsageError("--validate-on slurm needs the push: the node pulls the "
                               "candidate it validates")
    if flags["on"] == "slurm" and (flags["no_push"] or flags["validate_on"] == "slurm"):
        raise click.UsageError("--on slurm needs the push (the nodes hand images on through "
                               "the registry) and validates on the nodes: not with --no-push "
                               "or --validate-on slurm")
    if flags["deferred"] and not flags["no_promote"]:
        raise click.UsageError("--defer-validation needs --no-promote: a platform not "
                               "validated here is never promoted here")
    policy = RunPolicy(push=not flags["no_push"], jobs=flags["jobs"], force=flags["force"],
                       no_cache=flags["no_cache"], promote=not flags["no_promote"],
                       deferred=frozenset(flags["deferred"]))
    return ReleaseOptions(
        manifest=flags["manifest"], root=flags["root"], only=list(flags["only"]),
        registry=flags["registry"], policy=policy, build_dir=flags["build_dir"],
        os_strategy=cast("Strategy", flags["os_source"]), offline=flags["offline"],
        stack_check=not flags["offline"], show_logs=not flags["quiet"],
        as_json=flags["as_json"], site=flags["site"], validate_on=flags["validate_on"],
        on=flags["on"])


@click.command()
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
@click.option("--slurm", is_flag=True,
              help="With IMAGE: validate it as a Slurm job of the site's cluster (slurm: in "
                   "the site file), bring its JSON and JUnit back.")
@SITE
@click.option("--runtime", type=click.Choice(["docker", "charliecloud"]), default="docker",
              show_default=True,
              help="With IMAGE: run it with the engine (docker run), or as HPC sites do with "
                   "Charliecloud (ch-convert, then ch-run: unprivileged, read-only, no "
                   "entrypoint); with --slurm, the job does that on the node.")
@click.option("--record-baseline", "record_as", default=None, metavar="YY.MM",
              help="With --host: compare with releases before YY.MM, then record the T3 "
                   "medians of a passing run as YY.MM's baseline.")
@JSON
def validate(image: str | None, host: bool, framework: str | None, version: str | None,
             python: str | None, manifest: Path | None, root: Path, out: Path,
             junit: Path | None,
             baselines_file: Path | None, slurm: bool, site: Path | None, runtime: str,
             record_as: str | None, as_json: bool) -> None:
    """Validate IMAGE inside a container, or this host with --host --framework NAME."""
    from ngc_builder.commands.validate import (
        ValidateHostOptions,
        ValidateImageOptions,
        validate_host_command,
        validate_image_command,
    )
    from ngc_builder.validate.baselines import DEFAULT_FILE as DEFAULT_BASELINES
    from ngc_builder.validate.host import HostBaselines
    if host == (image is not None) or (host and framework is None):
        raise click.UsageError("give IMAGE, or --host with --framework NAME")
    if runtime != "docker" and host:
        raise click.UsageError(f"--runtime {runtime} runs IMAGE: not with --host")
    if host:
        assert framework is not None
        baselines = HostBaselines(baselines_file or root / DEFAULT_BASELINES, record_as)
        host_options = ValidateHostOptions(framework, python, root, version, out, junit,
                                           as_json, baselines)
        sys.exit(guarded(lambda: validate_host_command(host_options), host_options.as_json))
    assert image is not None
    image_options = ValidateImageOptions(image, manifest, out, junit, as_json,
                                         baselines_file or root / DEFAULT_BASELINES,
                                         slurm=slurm, site=site, root=root,
                                         runtime=runtime)
    sys.exit(guarded(lambda: validate_image_command(image_options), image_options.as_json))



@click.command()
@MANIFEST
@ROOT
@click.option("--out-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Where the pipeline files go: .github/workflows/, .github/actionlint.yaml "
                   "and .gitlab/ci/ under it [default: the project root].")
@click.option("--check", is_flag=True, help="Compare instead of writing; exit 1 when stale.")
@SITE
def ci(manifest: Path, root: Path | None, out_dir: Path | None, check: bool,
       site: Path | None) -> None:
    """Generate the monthly-build pipelines (GitHub Actions, GitLab CI) where the services
    read them: one job per image needing its parent's job, GPU validation jobs, a last
    promote/verify/report job (docs/ci.md)."""
    from ngc_builder.commands.ci import CiOptions, ci_command
    options = CiOptions(manifest, root, out_dir, check, site)
    sys.exit(guarded(lambda: ci_command(options)))


