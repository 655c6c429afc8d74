"""SIGINT and SIGTERM sent to the real CLI in the middle of a build and of a validation: the
run stops at once with one line naming image and step, removes its containers, leaves a
record a rerun trusts (finished steps kept, the cut step named), tags nothing that was not
validated; the rerun resumes without redoing what finished."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from ngc_builder.services.registry import parse_registry
from tests.conftest import wait_until
from tests.faults.project import slow_project
from tests.faults.running import Release, containers_running, namespace, own_containers

pytestmark = pytest.mark.faults


def test_sigterm_mid_validation_removes_the_runner_and_the_rerun_only_validates(
    tmp_path: Path,
) -> None:
    project = slow_project(tmp_path / "project", validate_seconds=40)
    run = Release(project.manifest, namespace("faults-term"), tmp_path / "build")
    process = run.start()
    run.wait_for("slow: validating")
    wait_until(lambda: own_containers(process.pid), 60, "the runner container running")
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert run.finish(timeout=60) == 128 + signal.SIGTERM
    assert time.monotonic() - started < 30
    assert own_containers(process.pid) == []
    assert run.problems() == ["!!! slow: validate: interrupted by SIGTERM; a rerun starts "
                              "this step again"], run.stderr()[-2000:]
    assert "interrupted by SIGTERM: the release record keeps every finished step" in run.stderr()
    assert "Traceback" not in run.stderr()
    record = run.record()
    assert record["interrupted"].startswith("SIGTERM at ") and record["finished"] is None
    slow = record["images"]["slow"]
    assert slow["build"]["status"] == "ok"
    assert slow["validation"] == {**slow["validation"], "status": "pending",
                                  "error": "interrupted by SIGTERM"}
    assert record["images"]["cuda-mini"]["push"]["status"] == "ok"
    registry = parse_registry(run.registry)
    assert registry.manifest_digest("slow", "26.11-py3") is None  # nothing unvalidated tagged

    assert run.run() == 0, run.stderr()[-3000:]
    again = run.record()["images"]
    assert again["slow"]["build"]["reused"] is True  # built once, by the first run
    assert again["slow"]["validation"]["status"] == "ok"
    assert again["cuda-mini"]["push"]["reused"] is True  # not pushed a second time
    assert registry.manifest_digest("slow", "26.11-py3") == again["slow"]["push"]["digest"]


@pytest.mark.extended  # a second path of a fault class CI covers (docs/testing.md)
def test_sigint_mid_build_cancels_the_build_and_records_nothing_built(tmp_path: Path) -> None:
    project = slow_project(tmp_path / "project", build_seconds=40)
    run = Release(project.manifest, namespace("faults-int"), tmp_path / "build")
    process = run.start()
    run.wait_for("slow: building")
    # The parent's promote may still be under way when its child starts building (by design:
    # children wait for the push only); interrupting both would be right, but not this test.
    run.wait_for("/cuda-mini:26.11-py3 -> sha256:")
    deadline = time.monotonic() + 60
    while not containers_running(project.token) and time.monotonic() < deadline:
        time.sleep(0.5)  # the build's RUN step has started
    assert containers_running(project.token)
    process.send_signal(signal.SIGINT)
    assert run.finish(timeout=60) == 128 + signal.SIGINT
    assert run.problems() == ["!!! slow: build: interrupted by SIGINT; a rerun starts this "
                              "step again"], run.stderr()[-2000:]
    deadline = time.monotonic() + 30  # the engine cancels a build whose client hung up
    while containers_running(project.token) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert containers_running(project.token) == []
    slow = run.record()["images"]["slow"]
    assert slow["build"]["status"] == "pending" and slow["build"]["image_id"] is None
    assert slow["push"]["status"] == "pending"
    assert parse_registry(run.registry).manifest_digest("slow", "26.11-py3") is None
