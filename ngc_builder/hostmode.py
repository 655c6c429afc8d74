"""`validate`: the runner against one image, or against this host's Python environment
(a GPU node with no Docker, a conda env) with the same checks and report."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .engine import connect, gpu_mode, image_exists
from .errors import InputError, Problem
from .junit import write_junit
from .manifest import load_model, load_release
from .models import Framework
from .plan import LABEL_PREFIX, plan_release
from .render import probe_files
from .runner.report import RunReport
from .validate import parse_report, validate_image

PACKAGE_PARENT = Path(__file__).resolve().parent.parent


def validate_image_command(
    ref: str, manifest: Path | None, out: Path, junit: Path | None, as_json: bool
) -> int:
    client = connect()
    if not image_exists(client, ref):
        raise InputError([Problem(ref, 1, "image", "no such image in the engine")])
    expected = _expected_labels(client, ref, manifest)
    name = ref.rsplit("/", 1)[-1].replace(":", "_")
    outcome = validate_image(client, ref, expected, gpu_mode(), out, name)
    if junit is not None:
        write_junit(outcome.report, junit, f"ngc.{name}")
    return _finish(outcome.report, as_json)


def _expected_labels(client: Any, ref: str, manifest: Path | None) -> dict[str, str]:
    if manifest is None:
        return {}
    found = client.api.inspect_image(ref)["Config"].get("Labels") or {}
    name = found.get(f"{LABEL_PREFIX}.image")
    plan = plan_release(load_release(manifest))
    if name not in {image.name for image in plan.images}:
        raise InputError([Problem(str(manifest), 1, "images",
                                  f"{ref} is labelled image={name!r}, not in this release")])
    return plan.get(name).labels


def validate_host_command(
    root: Path, framework: str, version: str | None, python: str, junit: Path | None,
    as_json: bool,
) -> int:
    folder = root / "frameworks" / framework
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
                  "version": version or _installed(python, spec.distribution or spec.name)}
        (expect_dir / "20-framework.json").write_text(json.dumps(expect))
        report = _run_with(python, expect_dir, probes)
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


def _run_with(python: str, expect_dir: Path, probes: Path) -> RunReport:
    # The runner is stdlib-only: any interpreter (a conda env, a GPU node's system Python)
    # can run it straight from this checkout, without ngc-builder's own dependencies.
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_PARENT)}
    command = [python, "-X", "faulthandler", "-m", "ngc_builder.runner", "--expect-dir",
               str(expect_dir), "--probes-dir", str(probes)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    return parse_report(done.stdout, done.stderr, done.returncode, gpu_mode())


def _finish(report: RunReport, as_json: bool) -> int:
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for check in report.checks:
            print(f"{check.status:4} {check.tier} {check.id}: {check.message}")
        print(f"verdict: {report.verdict} {report.summary}")
    return 0 if report.verdict == "pass" else 1
