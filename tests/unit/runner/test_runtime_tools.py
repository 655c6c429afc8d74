"""Runner checks of how an image is started (runtime.py) and of its researcher tools (tools.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ngc_builder.manifest.drivers import require_cuda
from ngc_builder.runner.tools import closure, exclusive_bytes, poll, requires_of

pytestmark = pytest.mark.unit


def test_require_cuda_accepts_this_cuda_or_the_tables_driver_branch() -> None:
    assert require_cuda("13.2") == "cuda>=13.2 driver>=580"
    assert require_cuda("12.9") == "cuda>=12.9 driver>=525.60.13"
    assert require_cuda("10.2") == "cuda>=10.2"  # no table row: the CUDA constraint alone


def test_the_exclusive_closure_leaves_out_what_others_need() -> None:
    graph = {"lab": {"server", "shared"}, "server": {"tornado"}, "tornado": set(),
             "shared": set(), "torch": {"shared"}}
    others = closure({"torch"}, graph)
    assert closure({"lab"}, graph) - others == {"lab", "server", "tornado"}


def test_requires_and_exclusive_bytes_read_the_installed_metadata() -> None:
    assert "urllib3" in requires_of("requests")
    assert "pysocks" not in requires_of("requests")  # only under the socks extra
    # ruff is what nothing else here needs: its own files at least.
    assert exclusive_bytes("ruff") > 100_000
    assert exclusive_bytes("no-such-distribution") == 0


def test_poll_reports_a_server_that_exits_and_one_that_answers_wrongly(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "raise SystemExit(4)"])
    dead.wait()
    assert poll("http://127.0.0.1:9/", dead, lambda _: True, timeout=5) == "the server exited 4"
    (tmp_path / "status").write_text(json.dumps({"nope": 1}))
    server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                               "--directory", str(tmp_path), "8765"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        found = poll("http://127.0.0.1:8765/status", server,
                     lambda body: "started" in json.loads(body), timeout=20)
        assert found is not None and found.startswith("unexpected answer")
        assert poll("http://127.0.0.1:8765/status", server,
                    lambda body: "nope" in json.loads(body), timeout=20) is None
    finally:
        server.terminate()
        server.wait()


def run_runner(tmp_path: Path, env: dict[str, str]) -> dict[str, dict[str, object]]:
    expect = tmp_path / "expect"
    expect.mkdir(exist_ok=True)
    (expect / "00.json").write_text(json.dumps({"image": "x", "stack": "cu13", "cuda": "13.2",
                                                "min_driver": "580"}))
    done = subprocess.run([sys.executable, "-m", "ngc_builder.runner", "--expect-dir", str(expect)],
                          capture_output=True, text=True, check=False, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "NGC_GPU": "none", **env}, timeout=120)
    return {c["id"]: c for c in json.loads(done.stdout)["checks"]}


def test_the_user_and_require_checks_fail_when_the_image_does_not_hold_up(
    tmp_path: Path,
) -> None:
    checks = run_runner(tmp_path, {"NGC_RUN_AS": "54321:54321,read-only", "HOME": "/nonexistent",
                                   "NVIDIA_REQUIRE_CUDA": "cuda>=13.2"})
    assert checks["image.user"]["status"] == "fail"  # not that UID, nor a read-only root
    assert checks["image.workdir"]["status"] == "fail"  # not /workspace
    assert checks["cuda.require"]["status"] == "fail"
    assert "driver>=580" in str(checks["cuda.require"]["message"])
    plain = run_runner(tmp_path, {"NVIDIA_REQUIRE_CUDA": "cuda>=13.2 driver>=580"})
    assert plain["image.user"]["status"] == "skip"  # not started by validate
    assert plain["cuda.require"]["status"] == "pass"
