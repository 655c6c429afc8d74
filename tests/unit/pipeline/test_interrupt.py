"""Stopping on SIGINT/SIGTERM: the scheduler does not wait for its workers, the record written
is the one last saved whole with the cut-short step named, and nothing is saved after."""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.interrupt import Interrupted, stop_run, stop_signals_raise
from ngc_builder.pipeline.run import RunServices, RunState
from ngc_builder.pipeline.schedule import Ready, schedule
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.record import ImageRecord, ReleaseRecord, load_record
from tests.unit.fake_engine import FakeClient, FakeEngine

pytestmark = pytest.mark.unit


def _signal_soon(number: int) -> None:
    threading.Timer(0.3, os.kill, (os.getpid(), number)).start()


def test_a_signal_stops_the_scheduler_without_waiting_for_its_workers() -> None:
    release = threading.Event()

    def work(spec: ImageSpec, ready: Ready) -> None:
        release.wait(30)  # a build that would run on for half a minute

    spec = ImageSpec("jax", "framework", None, "26.11", "debian-trixie")
    started = time.monotonic()
    with pytest.raises(Interrupted) as stopped, stop_signals_raise():
        _signal_soon(signal.SIGTERM)
        schedule([spec], work, jobs=1)
    release.set()
    assert time.monotonic() - started < 5
    assert (stopped.value.signal_name, stopped.value.exit_code) == ("SIGTERM", 143)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers put back


def _state(tmp_path: Path) -> RunState:
    record = ReleaseRecord(release="26.11", registry="r", manifest="m")
    record.images["jax"] = ImageRecord(name="jax", kind="framework")
    record.images["jax"].build.status = "ok"
    return RunState(record, tmp_path / "release.json")


def test_stop_run_writes_the_last_saved_record_with_the_cut_step_named(tmp_path: Path) -> None:
    state = _state(tmp_path)
    state.save()
    state.doing("jax", "validate")
    state.record.images["jax"].validation.status = "failed"  # a worker's view of the kill
    out = io.StringIO()
    services = RunServices(FakeClient(FakeEngine()), Ui(tmp_path / "logs", stream=out))
    stop_run(state, services, Interrupted(signal.SIGTERM))
    saved = load_record(tmp_path / "release.json")
    assert saved is not None and saved.interrupted is not None
    assert saved.interrupted.startswith("SIGTERM at ")
    jax = saved.images["jax"]
    assert (jax.build.status, jax.validation.status) == ("ok", "pending")
    assert jax.validation.error == "interrupted by SIGTERM"
    assert out.getvalue().strip() == ("!!! jax: validate: interrupted by SIGTERM; a rerun "
                                      "starts this step again")
    state.save()  # a worker finishing after the stop writes nothing
    services.ui.problem("jax", "validate: failed")  # and says nothing
    assert load_record(tmp_path / "release.json") == saved
    assert "failed" not in out.getvalue()


def test_a_finished_step_is_not_marked_when_its_image_moved_on(tmp_path: Path) -> None:
    state = _state(tmp_path)
    state.save()
    state.doing("jax", "build")  # build ok on disk already: nothing to undo
    services = RunServices(FakeClient(FakeEngine()), Ui(tmp_path / "logs",
                                                         stream=io.StringIO()))
    stop_run(state, services, Interrupted(signal.SIGINT))
    saved = load_record(tmp_path / "release.json")
    assert saved is not None and saved.images["jax"].build.status == "ok"


def test_another_platform_s_step_in_flight_is_marked_on_that_platform(tmp_path: Path) -> None:
    """`build linux/arm64` once ended stop_run in a KeyError, so its containers stayed and
    the process waited on its workers; it is the arm64 build that a rerun starts again."""
    from ngc_builder.records.record import PlatformRecord

    state = _state(tmp_path)
    state.record.images["jax"].platforms["linux/arm64"] = PlatformRecord()
    state.save()
    state.doing("jax", "build linux/arm64")
    out = io.StringIO()
    services = RunServices(FakeClient(FakeEngine()), Ui(tmp_path / "logs", stream=out))
    stop_run(state, services, Interrupted(signal.SIGTERM))
    saved = load_record(tmp_path / "release.json")
    assert saved is not None
    arm64 = saved.images["jax"].platforms["linux/arm64"]
    assert (arm64.build.status, arm64.build.error) == ("pending", "interrupted by SIGTERM")
    assert saved.images["jax"].build.status == "ok"
    assert "jax: build linux/arm64: interrupted by SIGTERM" in out.getvalue()
