"""`ngc-builder validate IMAGE` (the runner inside a container) and `ngc-builder validate
--host --framework NAME` (the same checks against a Python environment of this machine)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.load import load_model, load_release
from ngc_builder.manifest.models import RELEASE_RE, Framework
from ngc_builder.plan.dag import LABEL_PREFIX, plan_release
from ngc_builder.runner.report import RunReport
from ngc_builder.services.engine import Engine, connect, gpu_mode, image_exists
from ngc_builder.validate.baselines import DEFAULT_FILE, measurements, record
from ngc_builder.validate.host import HostBaselines, baseline_document, validate_host
from ngc_builder.validate.image import validate_image, write_reports
from ngc_builder.validate.junit import write_junit


@dataclass(frozen=True)
class ValidateImageOptions:
    ref: str
    manifest: Path | None = None  # the release whose labels the image must carry
    out: Path = Path("build/validate")
    junit: Path | None = None
    as_json: bool = False
    baselines_file: Path = DEFAULT_FILE


@dataclass(frozen=True)
class ValidateHostOptions:
    framework: str
    python: str
    root: Path = Path(".")
    version: str | None = None
    out: Path = Path("build/validate")
    junit: Path | None = None
    as_json: bool = False
    baselines: HostBaselines | None = None


def validate_image_command(options: ValidateImageOptions, engine: Engine | None = None) -> int:
    """`engine`: where the image is (default: the local engine)."""
    engine = engine or connect()
    ref = options.ref
    if not image_exists(engine, ref):
        raise InputError([Problem(ref, 1, "image", "no such image in the engine")])
    labels = engine.api.inspect_image(ref)["Config"].get("Labels") or {}
    expected = _expected_labels(labels, ref, options.manifest)
    name = ref.rsplit("/", 1)[-1].replace(":", "_")
    lineage = labels.get(f"{LABEL_PREFIX}.image") or name.split("_")[0]
    document = baseline_document(HostBaselines(options.baselines_file), lineage)
    outcome = validate_image(engine, ref, expected, gpu_mode(), options.out, name,
                             baselines=document)
    if options.junit is not None:
        write_junit(outcome.report, options.junit, f"ngc.{name}")
    return _finish(outcome.report, options.as_json)


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
    folder = options.root / "frameworks" / options.framework
    baselines = options.baselines
    if baselines and baselines.record_as and not RELEASE_RE.fullmatch(baselines.record_as):
        raise InputError([Problem("--record-baseline", 1, "record-baseline",
                                  f"{baselines.record_as!r} is not a release id (YY.MM)")])
    if not (folder / "framework.yaml").is_file():
        raise InputError([Problem(str(folder), 1, "framework", "no such framework folder")])
    spec, _ = load_model(folder / "framework.yaml", Framework, str(folder / "framework.yaml"))
    lineage = f"host-{spec.name}"
    report, stderr = validate_host(options.python, folder, spec, options.version, gpu_mode(),
                                   baseline_document(baselines, lineage))
    write_reports(report, options.out, lineage, f"host:{options.python}", stderr)
    if baselines is not None and baselines.record_as is not None and report.verdict == "pass":
        record(baselines.file, measurements(report, lineage, baselines.record_as))
    if options.junit is not None:
        write_junit(report, options.junit, f"ngc.host.{spec.name}")
    return _finish(report, options.as_json)


def _finish(report: RunReport, as_json: bool) -> int:
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for check in report.checks:
            print(f"{check.status:4} {check.tier} {check.id}: {check.message}")
        print(f"verdict: {report.verdict} {report.summary}")
    return EXIT_OK if report.verdict == "pass" else EXIT_FAILED
