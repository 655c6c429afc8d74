"""`validate`: the runner against one image, or against this host's Python environment
(a GPU node with no Docker, a conda env) with the same checks and report."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.load import load_model, load_release
from ngc_builder.manifest.models import DEFAULT_GPU_TARGETS, RELEASE_RE, Framework
from ngc_builder.plan.dag import LABEL_PREFIX, plan_release
from ngc_builder.render.contexts import probe_files
from ngc_builder.runner.report import RunReport
from ngc_builder.services.engine import connect, gpu_mode, image_exists
from ngc_builder.validate.baselines import (
    DEFAULT_FILE,
    load_book,
    measurements,
    record,
    runner_document,
)
from ngc_builder.validate.image import parse_report, validate_image, write_reports
from ngc_builder.validate.junit import write_junit

PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def validate_image_command(
    ref: str, manifest: Path | None, out: Path, junit: Path | None, as_json: bool,
    baselines_file: Path = DEFAULT_FILE,
) -> int:
    client = connect()
    if not image_exists(client, ref):
        raise InputError([Problem(ref, 1, "image", "no such image in the engine")])
    labels = client.api.inspect_image(ref)["Config"].get("Labels") or {}
    expected = _expected_labels(labels, ref, manifest)
    name = ref.rsplit("/", 1)[-1].replace(":", "_")
    lineage = labels.get(f"{LABEL_PREFIX}.image") or name.split("_")[0]
    document = _baseline_document(HostBaselines(baselines_file), lineage)
    outcome = validate_image(client, ref, expected, gpu_mode(), out, name, baselines=document)
    if junit is not None:
        write_junit(outcome.report, junit, f"ngc.{name}")
    return _finish(outcome.report, as_json)


def _expected_labels(found: dict[str, str], ref: str, manifest: Path | None) -> dict[str, str]:
    if manifest is None:
        return {}
    name = found.get(f"{LABEL_PREFIX}.image")
    plan = plan_release(load_release(manifest))
    if name not in {image.name for image in plan.images}:
        raise InputError([Problem(str(manifest), 1, "images",
                                  f"{ref} is labelled image={name!r}, not in this release")])
    return plan.get(name).labels


@dataclass(frozen=True)
class HostBaselines:
    """T3 in host mode: the project's baseline file, and the release to record medians as."""

    file: Path
    record_as: str | None = None


def validate_host_command(
    root: Path, framework: str, version: str | None, python: str, out: Path,
    junit: Path | None, as_json: bool, baselines: HostBaselines | None = None,
) -> int:
    folder = root / "frameworks" / framework
    if baselines and baselines.record_as and not RELEASE_RE.fullmatch(baselines.record_as):
        raise InputError([Problem("--record-baseline", 1, "record-baseline",
                                      f"{baselines.record_as!r} is not a release id (YY.MM)")])
    if not (folder / "framework.yaml").is_file():
        raise InputError([Problem(str(folder), 1, "framework", "no such framework folder")])
    spec, _ = load_model(folder / "framework.yaml", Framework, str(folder / "framework.yaml"))
    with tempfile.TemporaryDirectory(prefix="ngc-host-") as scratch:
        expect_dir, probes = Path(scratch) / "expect", Path(scratch) / "probes"
        expect_dir.mkdir()
        probes.mkdir()
        for name, content in probe_files(folder / "probe.py").items():
            target = probes / spec.name / name.removeprefix("probe/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        expect = {"image": f"host:{spec.name}", "framework": spec.name, "probe": spec.name,
                  "distribution": spec.distribution, "import_name": spec.import_name,
                  "version": version or _installed(python, spec.distribution or spec.name),
                  "gpu_targets": list(DEFAULT_GPU_TARGETS)}
        (expect_dir / "20-framework.json").write_text(json.dumps(expect))
        lineage = f"host-{spec.name}"
        document = _baseline_document(baselines, lineage)
        report, stderr = _run_with(python, expect_dir, probes, document)
    write_reports(report, out, lineage, f"host:{python}", stderr)
    if baselines is not None and baselines.record_as is not None:
        book_entries = measurements(report, lineage, baselines.record_as)
        if report.verdict == "pass":
            record(baselines.file, book_entries)
    if junit is not None:
        write_junit(report, junit, f"ngc.host.{spec.name}")
    return _finish(report, as_json)


def _installed(python: str, distribution: str) -> str:
    code = ("import importlib.metadata as m, sys\n"
            "try: print(m.version(sys.argv[1]))\n"
            "except m.PackageNotFoundError: print('not-installed')")
    done = subprocess.run([python, "-c", code, distribution], capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() or "not-installed"


def _baseline_document(baselines: HostBaselines | None, lineage: str) -> dict[str, Any] | None:
    if baselines is None:
        return None
    return runner_document(load_book(baselines.file), lineage, baselines.record_as)


def _run_with(
    python: str, expect_dir: Path, probes: Path, baselines: dict[str, Any] | None = None,
) -> tuple[RunReport, str]:
    # The runner is stdlib-only: any interpreter (a conda env, a GPU node's system Python)
    # can run it straight from this checkout, without ngc-builder's own dependencies.
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_PARENT)}
    if baselines is not None:
        env["NGC_BASELINES"] = json.dumps(baselines)
    command = [python, "-X", "faulthandler", "-m", "ngc_builder.runner", "--expect-dir",
               str(expect_dir), "--probes-dir", str(probes)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    return parse_report(done.stdout, done.stderr, done.returncode, gpu_mode()), done.stderr


def _finish(report: RunReport, as_json: bool) -> int:
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for check in report.checks:
            print(f"{check.status:4} {check.tier} {check.id}: {check.message}")
        print(f"verdict: {report.verdict} {report.summary}")
    return 0 if report.verdict == "pass" else 1
