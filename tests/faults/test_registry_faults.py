"""The registry killed mid-push (and started again, during the run or after it) and the
registry's storage full (a real tmpfs): one line per image naming the push, nothing tagged
that is not whole, and a rerun that pushes without building or validating again."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from ngc_builder.services.registry import parse_registry
from tests.faults.disks import small_fs
from tests.faults.project import slow_project
from tests.faults.registry import own_registry
from tests.faults.running import Release, namespace

pytestmark = pytest.mark.faults
IMAGES = ("base", "cuda-mini", "slow")


def test_registry_killed_mid_push_fails_each_push_in_one_line_and_the_rerun_only_pushes(
    tmp_path: Path,
) -> None:
    project = slow_project(tmp_path / "project")
    with own_registry(tmp_path / "registry") as registry:
        run = Release(project.manifest, namespace("faults", registry.host), tmp_path / "build",
                      env={"NGC_RETRIES": "2", "NGC_RETRY_WAIT": "0.5"})
        process = run.start()
        run.wait_for("base: pushing candidate")
        registry.stop(signal.SIGKILL)
        assert run.finish(timeout=600) == 1, run.stderr()[-3000:]
        print("\n".join(run.problems()))
        assert "Traceback" not in run.stderr()
        assert [line.split(":")[0:2] for line in run.problems()] == \
            [["!!! base", " push"], ["!!! cuda-mini", " push"], ["!!! slow", " push"]]
        failed = run.record()["images"]
        for name in IMAGES:
            assert failed[name]["validation"]["status"] == "ok"
            assert failed[name]["push"]["status"] == "failed"
            assert failed[name]["push"]["digest"] is None
        registry.start()  # same storage, same address
        assert process.returncode and run.run() == 0, run.stderr()[-3000:]
        resumed = run.record()["images"]
        assert resumed["slow"]["build"]["reused"] and resumed["slow"]["validation"]["reused"]
        assert "building" not in run.stderr()
        held = parse_registry(run.registry)
        for name in IMAGES:
            assert held.manifest_digest(name, "26.11-py3") == resumed[name]["push"]["digest"]


@pytest.mark.extended  # a second path of a fault class CI covers (docs/testing.md)
def test_registry_back_within_the_retries_lets_the_run_finish(tmp_path: Path) -> None:
    project = slow_project(tmp_path / "project")
    with own_registry(tmp_path / "registry") as registry:
        run = Release(project.manifest, namespace("faults", registry.host), tmp_path / "build",
                      env={"NGC_RETRIES": "6", "NGC_RETRY_WAIT": "2"})
        run.start()
        run.wait_for("base: pushing candidate")
        registry.stop(signal.SIGKILL)
        time.sleep(3)
        registry.start()
        assert run.finish(timeout=600) == 0, run.stderr()[-3000:]
        said = run.stderr() + "".join(p.read_text() for p in run.build_dir.rglob("*.log"))
        # The retry is said, not silent: the engine's own ("Retrying in 5 seconds", in the
        # image's log) or ours ("again in").
        assert "Retrying in" in said or "again in" in said
        digest = run.record()["images"]["slow"]["push"]["digest"]
        assert parse_registry(run.registry).manifest_digest(
            "slow", "26.11-py3") == digest


@pytest.mark.extended  # a second path of a fault class CI covers (docs/testing.md)
def test_registry_storage_full_fails_the_push_in_one_line_and_the_rerun_completes(
    tmp_path: Path,
) -> None:
    project = slow_project(tmp_path / "project")
    with small_fs(tmp_path / "storage", "24m") as storage, \
            own_registry(tmp_path / "registry", storage) as registry:
        run = Release(project.manifest, namespace("faults", registry.host), tmp_path / "build",
                      env={"NGC_RETRIES": "1"})  # the engine retries each layer itself
        assert run.run(timeout=600) == 1, run.stderr()[-3000:]
        print("\n".join(run.problems()))
        assert "Traceback" not in run.stderr()
        assert run.problems()[0].startswith("!!! base: push: ")
        assert run.record()["images"]["base"]["push"]["digest"] is None
        held = parse_registry(run.registry)
        assert held.manifest_digest("base", "26.11-py3") is None
        subprocess.run(["mount", "-o", "remount,size=1g", str(storage)], check=True)
        assert run.run(timeout=600) == 0, run.stderr()[-3000:]
        assert held.manifest_digest("slow", "26.11-py3") == \
            run.record()["images"]["slow"]["push"]["digest"]
