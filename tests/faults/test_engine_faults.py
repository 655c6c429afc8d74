"""The Docker engine itself failing: a second real dockerd (its own data root, socket and
bridge; the main engine is never touched) killed by PID mid-build and mid-validation, and its
data root (a real tmpfs) full mid-build. Each time: one line naming image and step, the record
honest, the engine's leftovers swept, and the rerun resumes once the engine is back."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ngc_builder.services.registry import parse_registry
from tests.conftest import wait_until
from tests.faults.engines import SecondEngine, copy_image, leave_free, second_engine, unavailable
from tests.faults.project import SlowProject, slow_project
from tests.faults.running import Release, containers_running, namespace, own_containers

pytestmark = pytest.mark.faults


def _with_os(engine: SecondEngine, os_ref: str) -> SecondEngine:
    """The OS base the fault project builds FROM, copied from the main engine
    (`locked_trixie_os` made it there if it was missing): the second one need not make it."""
    copy_image(os_ref, engine)
    return engine


@contextlib.contextmanager
def short_folder() -> Iterator[Path]:
    """A folder with a short path: containerd's sockets live in it, and a unix socket's path
    must stay under 104 bytes (pytest's tmp_path is longer)."""
    folder = Path(tempfile.mkdtemp(prefix="ngce-"))
    try:
        yield folder / "engine"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def engine(locked_trixie_os: str) -> Iterator[SecondEngine]:
    if (reason := unavailable()) is not None:
        pytest.skip(reason)
    with short_folder() as folder, second_engine(folder) as started:
        yield _with_os(started, locked_trixie_os)


def _release_on(engine: SecondEngine, manifest: Path, tmp_path: Path) -> Release:
    return Release(manifest, namespace("faults-engine"), tmp_path / "build", env=engine.env())


def test_engine_killed_mid_build_fails_the_build_in_one_line_and_the_rerun_builds_only_it(
    tmp_path: Path, engine: SecondEngine,
) -> None:
    # The kill needs cuda-mini promoted while slow's layer still sleeps, and cuda-mini's push
    # runs beside that layer: 20 s to 50 s here. A fixed sleep lost that race on 2026-11-28
    # (20 s, then 45 s); the layer sleeps until a time well past it instead, and the rerun's
    # layer is let go at once (it waited for what was left: about 150 s of CI).
    project = slow_project(tmp_path / "project", build_until=int(time.time()) + 240)
    try:
        _killed_then_rerun(project, engine, tmp_path)
    finally:
        project.go_file.unlink(missing_ok=True)


def _killed_then_rerun(project: SlowProject, engine: SecondEngine, tmp_path: Path) -> None:
    run = _release_on(engine, project.manifest, tmp_path)
    run.start()
    run.wait_for("slow: building")
    run.wait_for("cuda-mini: " + run.registry + "/cuda-mini:26.11-py3 -> ")
    wait_until(lambda: containers_running(project.token, engine.host), 120,
               "the slow image's build container running")
    engine.kill()
    assert run.finish(timeout=120) == 1
    print("\n".join(run.problems()))
    assert run.problems() == ["!!! slow: build: the engine closed the stream mid-way (stopped "
                              "or restarted?): ProtocolError"], run.stderr()[-3000:]
    assert "Traceback" not in run.stderr() and "internal error" not in run.stderr()
    images = json.loads(run.stdout_file.read_text())["images"]  # --json still answers
    assert images["slow"]["build"]["status"] == "failed"
    assert images["cuda-mini"]["push"]["status"] == "ok"
    engine.start()
    project.let_go()
    assert run.run() == 0, run.stderr()[-3000:]
    assert [line for line in run.stderr().splitlines() if "building" in line] == [
        line for line in run.stderr().splitlines() if "slow: building" in line] != []
    assert run.record()["images"]["cuda-mini"]["push"]["reused"] is True


@pytest.mark.extended  # a second path of a fault class CI covers (docs/testing.md)
def test_engine_killed_mid_validation_fails_it_in_one_line_and_the_rerun_sweeps_its_runner(
    tmp_path: Path, engine: SecondEngine,
) -> None:
    project = slow_project(tmp_path / "project", validate_seconds=15)
    run = _release_on(engine, project.manifest, tmp_path)
    process = run.start()
    run.wait_for("slow: validating")
    # The runner carries the run's process label (the token is in the build's command
    # only: this waited on a build container an earlier builder left behind).
    wait_until(lambda: own_containers(process.pid, engine.host), 60,
               "the slow image's runner container running")
    engine.kill()
    assert run.finish(timeout=120) == 1
    print("\n".join(run.problems()))
    # The stack's candidate may still be on its way to the registry when the engine dies
    # (its layer with Open MPI is 0.3 GB): that image fails in its own line, as it should.
    [problem] = [line for line in run.problems() if line.startswith("!!! slow:")]
    others = [line for line in run.problems() if not line.startswith("!!! slow:")]
    assert all(line.startswith("!!! cuda-mini: ") for line in others), others
    assert problem.startswith("!!! slow: validate: the engine went away mid-validation "
                              "(stopped or restarted?): ConnectionError: "), problem
    assert "Traceback" not in run.stderr() and "internal error" not in run.stderr()
    slow = run.record()["images"]["slow"]
    assert (slow["build"]["status"], slow["validation"]["status"]) == ("ok", "failed")
    assert slow["push"]["status"] == "blocked"
    assert parse_registry(run.registry).manifest_digest("slow", "26.11-py3") is None
    engine.start()
    assert own_containers(process.pid, engine.host)  # the dead run's runner is still there
    assert run.run() == 0, run.stderr()[-3000:]
    assert "removed 1 container(s) left by an earlier run that was killed" in run.stderr()
    assert own_containers(process.pid, engine.host) == []
    assert run.record()["images"]["slow"]["build"]["reused"] is True


@pytest.mark.extended  # a second path of a fault class CI covers (docs/testing.md)
def test_data_root_full_mid_build_says_so_in_one_line_and_the_rerun_completes(
    tmp_path: Path, locked_trixie_os: str,
) -> None:
    if (reason := unavailable()) is not None:
        pytest.skip(reason)
    project = slow_project(tmp_path / "project")
    with short_folder() as folder, second_engine(folder, data_root_size="1G") as small:
        _with_os(small, locked_trixie_os)
        leave_free(small, 40 * 1024 * 1024)
        run = Release(project.manifest, namespace("faults-full"), tmp_path / "build",
                      env=small.env())
        assert run.run(timeout=300) == 1, run.stderr()[-3000:]
        print("\n".join(run.problems()))
        base = run.problems()[0]
        assert base.startswith("!!! base: build: The command '")
        assert base.endswith("(its output says 'No space left on device': the engine's data "
                             "root is full)") and len(base) < 400
        assert run.problems()[1:] == ["!!! cuda-mini: build: blocked: base did not pass",
                                      "!!! slow: build: blocked: cuda-mini did not pass"]
        small.docker("info")  # the engine lives on
        (small.folder / "data" / "ballast").unlink()
        assert run.run(timeout=600) == 0, run.stderr()[-3000:]
