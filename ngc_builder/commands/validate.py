"""`ngc-builder validate IMAGE` (the runner inside a container) and `ngc-builder validate
--host --framework NAME` (the same checks against a Python environment of this machine)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker.errors
import requests

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.errors import EngineError, InputError, Problem, StepError
from ngc_builder.files import INPUT_LIMIT, read_text
from ngc_builder.manifest.framework import Framework
from ngc_builder.manifest.load import load_model, load_release
from ngc_builder.manifest.models import RELEASE_ID_RE
from ngc_builder.manifest.paths import probe_modules
from ngc_builder.manifest.site import slurm_site
from ngc_builder.pipeline.interrupt import stop_signals_raise
from ngc_builder.plan.dag import LABEL_PREFIX, plan_release
from ngc_builder.runner.report import RunReport
from ngc_builder.services.engine import Engine, connect, gpu_mode, image_exists
from ngc_builder.services.reference import name_problem
from ngc_builder.services.slurm import SlurmCluster, SubprocessSlurm
from ngc_builder.validate.baselines import DEFAULT_FILE, measurements, record
from ngc_builder.validate.charliecloud import ChRun, image_facts, validate_charliecloud
from ngc_builder.validate.chrun import (
    Account,
    Processes,
    SubprocessProcesses,
    is_reference,
    run_account,
)
from ngc_builder.validate.evidence import write_reports
from ngc_builder.validate.host import HostBaselines, baseline_document
from ngc_builder.validate.image import validate_image
from ngc_builder.validate.junit import write_junit
from ngc_builder.validate.node import framework_folder, run_framework
from ngc_builder.validate.slurm import validate_on_slurm
from ngc_builder.validate.srun import Worker, workers_for

FRAMEWORK_LABEL = f"{LABEL_PREFIX}.framework"


@dataclass(frozen=True)
class ValidateImageOptions:
    ref: str
    manifest: Path | None = None  # the release whose labels the image must carry
    out: Path = Path("build/validate")
    junit: Path | None = None
    as_json: bool = False
    baselines_file: Path = DEFAULT_FILE
    slurm: bool = False  # as a job of the site's Slurm cluster
    site: Path | None = None
    root: Path = Path(".")
    runtime: str = "docker"  # or charliecloud: ch-run, unprivileged, without the entrypoint


@dataclass(frozen=True)
class ValidateHostOptions:
    framework: str
    python: str | None  # None: the first interpreter that imports the framework
    root: Path = Path(".")
    version: str | None = None
    out: Path = Path("build/validate")
    junit: Path | None = None
    as_json: bool = False
    baselines: HostBaselines | None = None


def validate_image_command(options: ValidateImageOptions, engine: Engine | None = None) -> int:
    """`engine`: where the image is (default: the local engine)."""
    if options.slurm:
        return validate_slurm_command(options, SubprocessSlurm(), engine)
    if options.runtime == "charliecloud":
        return validate_charliecloud_command(options, engine)
    ref = checked_reference(options.ref)  # refused here, not as the engine's 404
    engine = engine or connect()
    expected, name, document = _image_inputs(engine, options)
    outcome = validate_image(engine, ref, expected, gpu_mode(), options.out, name,
                             baselines=document)
    if options.junit is not None:
        write_junit(outcome.report, options.junit, f"ngc.{name}")
    return _finish(outcome.report, options.as_json)


def checked_reference(ref: str) -> str:
    """It becomes an argument of docker, ch-convert or srun: never an option, never two."""
    if not is_reference(ref):
        raise InputError([Problem("IMAGE", 1, "image", f"{ref!r} is not an image name or "
                                  "ID (letters, digits and ._/:@-, not starting with -)")])
    return ref


def validate_charliecloud_command(options: ValidateImageOptions, engine: Engine | None = None,
                                  processes: Processes | None = None,
                                  account: Account | None = None) -> int:
    """The image from `engine`, converted and run by Charliecloud as HPC sites start it.
    `processes`, `account`: the programs and the unprivileged user (default: the real ones)."""
    ref = checked_reference(options.ref)
    engine = engine or connect()
    expected, name, document = _image_inputs(engine, options)
    image = image_facts(ref, engine.api.inspect_image(ref))
    if image is None:
        raise InputError([Problem(ref, 1, "image", "ch-convert reads images by name and this "
                                  "one has no tag: `docker tag` it, then validate the tag")])
    ch = ChRun(processes or SubprocessProcesses(), account or _run_account(ref), ref)
    with stop_signals_raise():  # SIGTERM too unwinds, so the converted copy is removed
        outcome = validate_charliecloud(ch, image, expected, gpu_mode(), options.out,
                                        f"{name}-charliecloud", baselines=document)
    if options.junit is not None:
        write_junit(outcome.report, options.junit, f"ngc.{name}.charliecloud")
    return _finish(outcome.report, options.as_json)


def _run_account(ref: str) -> Account:
    try:
        return run_account()
    except KeyError:
        raise StepError(ref, "charliecloud", "no `nobody` account to run ch-run as (root "
                        "runs images unprivileged, as that user)") from None


def _image_inputs(engine: Engine, options: ValidateImageOptions
                  ) -> tuple[dict[str, str], str, dict[str, Any] | None]:
    """The labels the image must carry, its report name and its T3 baselines."""
    ref = options.ref
    if not image_exists(engine, ref):
        raise InputError([Problem(ref, 1, "image", "no such image in the engine")])
    labels = engine.api.inspect_image(ref)["Config"].get("Labels") or {}
    expected = _expected_labels(labels, ref, options.manifest)
    name = ref.rsplit("/", 1)[-1].replace(":", "_")
    lineage = _lineage(ref, labels, name)
    document = baseline_document(HostBaselines(options.baselines_file), lineage)
    return expected, name, document


def validate_slurm_command(options: ValidateImageOptions, cluster: SlurmCluster,
                           engine: Engine | None = None) -> int:
    """The image as a job of the site's cluster. The image need not be on this host (a node
    pulls a registry ref); where it is, its labels name its release image and framework."""
    site = slurm_site(options.site, options.root)
    if options.runtime == "charliecloud":  # asked for on the command line: the site's other
        site = site.model_copy(update={"runtime": "charliecloud"})
    ref = checked_reference(options.ref)
    labels = _local_labels(engine, ref)
    name = ref.rsplit("/", 1)[-1].replace(":", "_")
    lineage = _lineage(ref, labels, name)
    expected = _expected_labels({f"{LABEL_PREFIX}.image": lineage, **labels}, ref,
                                options.manifest)
    known = {**labels, **expected}
    framework = None
    if site.runtime == "host":
        framework = _framework_of(ref, known, options.root)
    document = baseline_document(HostBaselines(options.baselines_file), lineage)
    outcome = validate_on_slurm(cluster, site, ref, expected,
                                "required" if site.gpus > 0 else "none", options.out, name,
                                baselines=document, framework=framework,
                                workers=_srun_workers(ref, known, options.root))
    if options.junit is not None:
        write_junit(outcome.report, options.junit, f"ngc.{name}")
    return _finish(outcome.report, options.as_json)


def _local_labels(engine: Engine | None, ref: str) -> dict[str, str]:
    """The image's labels when this host's engine has it; nothing otherwise."""
    try:
        engine = engine or connect(timeout=30)
        found: dict[str, str] = engine.api.inspect_image(ref)["Config"].get("Labels") or {}
    except (EngineError, docker.errors.DockerException, requests.RequestException):
        return {}
    return found


def _srun_workers(ref: str, labels: dict[str, str], root: Path) -> tuple[Worker, ...]:
    """The two-process jobs to launch under srun too: the image's CUDA stack and framework
    as its labels (or the release) name them, the probes from this checkout's folder."""
    name = framework_label(ref, labels)
    folder = root / "frameworks" / name if name else None
    modules = {path.name: read_text(path, INPUT_LIMIT) for path in probe_modules(folder)
               if path.is_file()} if folder is not None and folder.is_dir() else {}
    return workers_for(bool(labels.get(f"{LABEL_PREFIX}.stack")), name, modules)


def _framework_of(ref: str, labels: dict[str, str], root: Path) -> Path:
    """Runtime host stages the probes of the image's framework from this checkout."""
    name = framework_label(ref, labels)
    if not name:
        raise InputError([Problem(ref, 1, "framework", "runtime host: the image's framework is "
                                  "unknown (no local image with its labels, no --release)")])
    return framework_folder(root, name)


def framework_label(ref: str, labels: dict[str, str]) -> str | None:
    """The image's framework as its label names it, held to the manifest's rule for a
    framework's name before it names a folder of frameworks/ (whose probes a job stages and
    runs) or a path in a job script: a label is the image's say, and `../../x` or `/tmp/x`
    would name a folder anywhere. Refused: bad input, before anything is staged or run."""
    return label_name(ref, labels, FRAMEWORK_LABEL, "it names no folder of frameworks/")


def label_name(ref: str, labels: dict[str, str], key: str, use: str) -> str | None:
    """The name an image's label `key` gives, held to the manifest's name rule (`use`: what
    the name would have become)."""
    name = labels.get(key)
    why = name_problem(name) if name is not None else None
    if why is not None:
        raise InputError([Problem(ref, 1, key, f"the image's label: {why}; {use}")])
    return name


def _lineage(ref: str, labels: dict[str, str], name: str) -> str:
    """The release image the report and the T3 baselines are kept under."""
    found = label_name(ref, labels, f"{LABEL_PREFIX}.image", "it names no image's baselines")
    return found or name.split("_")[0]


def _expected_labels(found: dict[str, str], ref: str, manifest: Path | None) -> dict[str, str]:
    if manifest is None:
        return {}
    name = found.get(f"{LABEL_PREFIX}.image")
    plan = plan_release(load_release(manifest))
    if name not in {image.name for image in plan.images}:
        raise InputError([Problem(str(manifest), 1, "images",
                                  f"{ref} is labelled image={name!r}, not in this release")])
    return plan.get(name).labels


def validate_host_command(options: ValidateHostOptions) -> int:
    baselines = options.baselines
    if baselines and baselines.record_as and not RELEASE_ID_RE.fullmatch(baselines.record_as):
        raise InputError([Problem("--record-baseline", 1, "record-baseline",
                                  f"{baselines.record_as!r} is not a release id "
                                  "(YY.MM or YY.MM.N)")])
    folder = framework_folder(options.root, options.framework)
    # The full CLI checks the whole file (the GPU-node path reads only what it needs).
    load_model(folder / "framework.yaml", Framework, str(folder / "framework.yaml"))
    lineage = f"host-{folder.name}"
    run = run_framework(folder, options.python, options.version, gpu_mode(),
                        baseline_document(baselines, lineage), skip_absent=False)
    report, stderr = run.report, run.stderr
    write_reports(report, options.out, lineage, f"host:{run.python}", stderr)
    if baselines is not None and baselines.record_as is not None and report.verdict == "pass":
        record(baselines.file, measurements(report, lineage, baselines.record_as))
    if options.junit is not None:
        write_junit(report, options.junit, f"ngc.host.{run.framework}")
    return _finish(report, options.as_json)


def _finish(report: RunReport, as_json: bool) -> int:
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for check in report.checks:
            print(f"{check.status:4} {check.tier} {check.id}: {check.message}")
        print(f"verdict: {report.verdict} {report.summary}")
    return EXIT_OK if report.verdict == "pass" else EXIT_FAILED
