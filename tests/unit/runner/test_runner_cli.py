from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.runner.report import RunReport

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[3]
RUNNER = ROOT / "ngc_builder" / "runner"

# A probe whose framework is the stdlib's json module, so no install is needed; it prints
# to stdout from Python and from the file descriptor, as frameworks and C libraries do.
NOISY_PROBE = """
import os
IMPORT_NAME = "json"

def register(suite):
    @suite.check("noisy.print", tier="T2")
    def noisy(ctx):
        print("python-level chatter")
        os.write(1, b"fd-level chatter\\n")
        return "printed"

    @suite.check("noisy.gpu", tier="T2", needs_gpu=True)
    def gpu(ctx):
        return "would need a GPU"
"""


def runner(
    args: list[str],
    *,
    module: str = "ngc_builder.runner",
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    flags: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "NGC_GPU"}
    environ.update(env or {})
    command = [sys.executable, *flags, "-m", module, *args]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, env=environ, timeout=120, check=False
    )


@pytest.fixture
def image_dirs(tmp_path: Path) -> tuple[Path, Path]:
    expect, probes = tmp_path / "expect", tmp_path / "probes"
    expect.mkdir()
    probes.mkdir()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    (expect / "00-base.json").write_text(json.dumps({"image": "base", "python": python}))
    (expect / "20-framework.json").write_text(
        json.dumps({"image": "noisy", "framework": "noisy", "probe": "noisy"})
    )
    (probes / "noisy.py").write_text(NOISY_PROBE)
    return expect, probes


def document(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(proc.stdout)  # stdout must be exactly one JSON document
    return data


def args_for(dirs: tuple[Path, Path], *extra: str) -> list[str]:
    return ["--expect-dir", str(dirs[0]), "--probes-dir", str(dirs[1]), *extra]


def test_pass_exits_0_and_stdout_is_only_json(
    image_dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out" / "report.json"
    proc = runner(args_for(image_dirs, "--gpu", "none", "--output", str(out)))
    assert proc.returncode == 0, proc.stderr
    data = document(proc)
    assert data["verdict"] == "pass" and data["image"] == "noisy"
    assert data["gpu"] == {"mode": "none", "expected": False}
    checks = {c["id"]: c for c in data["checks"]}
    assert checks["noisy.gpu"]["status"] == "skip" and checks["noisy.gpu"]["message"] == "no GPU"
    assert "python-level chatter" in proc.stderr and "fd-level chatter" in proc.stderr
    assert json.loads(out.read_text()) == data
    assert RunReport.from_dict(data).to_dict() == data  # the host side parses it back losslessly


def test_required_gpu_on_a_host_without_one_exits_1(image_dirs: tuple[Path, Path]) -> None:
    proc = runner(args_for(image_dirs), env={"NGC_GPU": "required"})
    assert proc.returncode == 1
    data = document(proc)
    assert data["gpu"]["mode"] == "required"
    failed = {c["id"]: c for c in data["checks"] if c["status"] == "fail"}
    assert "noisy.gpu" not in failed  # the probe's check passes: "json" needs no GPU
    if not Path("/dev/nvidiactl").exists():
        assert failed["gpu.driver"]["fault"] == "host"


def test_cli_flag_beats_environment(image_dirs: tuple[Path, Path]) -> None:
    proc = runner(args_for(image_dirs, "--gpu", "none"), env={"NGC_GPU": "required"})
    assert proc.returncode == 0 and document(proc)["gpu"]["mode"] == "none"


@pytest.mark.parametrize(
    ("setup", "extra", "env", "stderr_part"),
    [
        ("missing", [], {}, "expect dir not found"),
        ("invalid", [], {}, "cannot read expectations"),
        ("ok", ["--gpu", "sometimes"], {}, "invalid choice"),
        ("ok", [], {"NGC_GPU": "sometimes"}, "GPU mode must be one of"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_json(
    tmp_path: Path, setup: str, extra: list[str], env: dict[str, str], stderr_part: str
) -> None:
    expect = tmp_path / "expect"
    if setup != "missing":
        expect.mkdir()
        (expect / "00.json").write_text("{broken" if setup == "invalid" else "{}")
    proc = runner(["--expect-dir", str(expect), *extra], env=env)
    assert proc.returncode == 2
    assert stderr_part in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    data = document(proc)
    assert data["verdict"] == "error" and data["checks"] == [] and stderr_part in data["error"]


def test_runs_as_top_level_ngc_runner_with_stdlib_only(
    image_dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    image_root = tmp_path / "opt"
    shutil.copytree(RUNNER, image_root / "ngc_runner", ignore=shutil.ignore_patterns("__pycache__"))
    # -S: no site-packages at all, so any third-party import in the runner would fail here.
    proc = runner(
        args_for(image_dirs, "--gpu", "none"), module="ngc_runner", cwd=image_root, flags=("-S",)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert document(proc)["verdict"] == "pass"
