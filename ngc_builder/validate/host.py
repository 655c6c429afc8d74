"""Host mode: the runner against a Python environment of this machine (a GPU node with no
Docker, a conda env), with the same probes, checks and report as inside an image."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder.manifest.models import DEFAULT_GPU_TARGETS, Framework
from ngc_builder.render.contexts import probe_files
from ngc_builder.runner.report import RunReport
from ngc_builder.validate.baselines import load_book, runner_document
from ngc_builder.validate.image import parse_report

PACKAGE_PARENT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class HostBaselines:
    """T3 in host mode: the project's baseline file, and the release to record medians as."""

    file: Path
    record_as: str | None = None


def baseline_document(baselines: HostBaselines | None, lineage: str) -> dict[str, Any] | None:
    """What the runner is held to for `lineage` (None: no T3 thresholds beyond the floors)."""
    if baselines is None:
        return None
    return runner_document(load_book(baselines.file), lineage, baselines.record_as)


def validate_host(python: str, folder: Path, spec: Framework, version: str | None,
                  gpu_mode: str, baselines: dict[str, Any] | None) -> tuple[RunReport, str]:
    """Run the framework's probes with `python`; the report and the runner's stderr."""
    with tempfile.TemporaryDirectory(prefix="ngc-host-") as scratch:
        expect_dir, probes = Path(scratch) / "expect", Path(scratch) / "probes"
        expect_dir.mkdir()
        probes.mkdir()
        for name, content in probe_files(folder / "probe.py").items():
            target = probes / spec.name / name.removeprefix("probe/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        expect = host_expect(python, spec, version)
        (expect_dir / "20-framework.json").write_text(json.dumps(expect))
        return _run_with(python, expect_dir, probes, gpu_mode, baselines)


def host_expect(python: str, spec: Framework, version: str | None) -> dict[str, Any]:
    """The expectations of a host environment. host_mode: its CUDA_VISIBLE_DEVICES is its
    scheduler's choice, not a defect. Extras as the default variant asks for them (this is a
    GPU environment); those not installed here are passed over."""
    return {"image": f"host:{spec.name}", "framework": spec.name, "probe": spec.name,
            "distribution": spec.distribution, "import_name": spec.import_name,
            "version": version or installed(python, spec.distribution or spec.name),
            "gpu_targets": list(DEFAULT_GPU_TARGETS), "host_mode": True,
            "extras": spec.extras_for("default")}


def installed(python: str, distribution: str) -> str:
    code = ("import importlib.metadata as m, sys\n"
            "try: print(m.version(sys.argv[1]))\n"
            "except m.PackageNotFoundError: print('not-installed')")
    done = subprocess.run([python, "-c", code, distribution], capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() or "not-installed"


def _run_with(python: str, expect_dir: Path, probes: Path, gpu_mode: str,
              baselines: dict[str, Any] | None) -> tuple[RunReport, str]:
    # The runner is stdlib-only: any interpreter (a conda env, a GPU node's system Python)
    # can run it straight from this checkout, without ngc-builder's own dependencies.
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_PARENT)}
    if baselines is not None:
        env["NGC_BASELINES"] = json.dumps(baselines)
    command = [python, "-X", "faulthandler", "-m", "ngc_builder.runner", "--expect-dir",
               str(expect_dir), "--probes-dir", str(probes)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    return parse_report(done.stdout, done.stderr, done.returncode, gpu_mode), done.stderr
