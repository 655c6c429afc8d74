"""`validate`: the runner against one image, or against this host's Python environment
(a GPU node with no Docker, a conda env) with the same checks and report."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from .engine import connect, gpu_mode
from .errors import InputError, Problem
from .junit import write_junit
from .manifest import load_release
from .models import Framework
from .plan import LABEL_PREFIX, plan_release
from .runner.report import RunReport
from .validate import parse_report, validate_image
from .yamlsrc import load_yaml


def validate_image_command(
    ref: str, manifest: Path | None, out: Path, junit: Path | None, as_json: bool
) -> int:
    client = connect()
    expected = _expected_labels(client, ref, manifest)
    name = ref.rsplit("/", 1)[-1].replace(":", "_")
    outcome = validate_image(client, ref, expected, gpu_mode(), out, name)
    if junit is not None:
        write_junit(outcome.report, junit, f"ngc.{name}")
    return _finish(outcome.report, as_json)


def _expected_labels(client: object, ref: str, manifest: Path | None) -> dict[str, str]:
    if manifest is None:
        return {}
    found = client.api.inspect_image(ref)["Config"].get("Labels") or {}  # type: ignore[attr-defined]
    name = found.get(f"{LABEL_PREFIX}.image")
    plan = plan_release(load_release(manifest))
    if name not in {image.name for image in plan.images}:
        raise InputError([Problem(str(manifest), 1, "images",
                                  f"{ref} is labelled image={name!r}, not in this release")])
    return plan.get(name).labels


def validate_host_command(
    root: Path, framework: str, version: str | None, junit: Path | None, as_json: bool
) -> int:
    folder = root / "frameworks" / framework
    if not (folder / "framework.yaml").is_file():
        raise InputError([Problem(str(folder), 1, "framework", "no such framework folder")])
    data, _ = load_yaml(folder / "framework.yaml", str(folder / "framework.yaml"))
    spec = Framework.model_validate(data)
    with tempfile.TemporaryDirectory(prefix="ngc-host-") as scratch:
        expect_dir, probes = Path(scratch) / "expect", Path(scratch) / "probes"
        expect_dir.mkdir()
        probes.mkdir()
        (probes / f"{spec.name}.py").write_bytes((folder / "probe.py").read_bytes())
        expect = {"image": f"host:{spec.name}", "framework": spec.name, "probe": spec.name,
                  "distribution": spec.distribution, "import_name": spec.import_name,
                  "version": version or _installed(spec.distribution)}
        (expect_dir / "20-framework.json").write_text(json.dumps(expect))
        report = _run_here(expect_dir, probes)
    if junit is not None:
        write_junit(report, junit, f"ngc.host.{spec.name}")
    return _finish(report, as_json)


def _installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not-installed"


def _run_here(expect_dir: Path, probes: Path) -> RunReport:
    command = [sys.executable, "-m", "ngc_builder.runner", "--expect-dir", str(expect_dir),
               "--probes-dir", str(probes)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return parse_report(done.stdout, done.stderr, done.returncode, gpu_mode())


def _finish(report: RunReport, as_json: bool) -> int:
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for check in report.checks:
            print(f"{check.status:4} {check.tier} {check.id}: {check.message}")
        print(f"verdict: {report.verdict} {report.summary}")
    return 0 if report.verdict == "pass" else 1
