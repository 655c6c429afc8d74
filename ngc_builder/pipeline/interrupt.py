"""Ctrl-C and SIGTERM during a release (a CI job cancelled, a Slurm time limit, a person).

The main thread hears the signal; the worker threads are in the middle of a build, a runner
container or a push. Stopping leaves what a rerun can trust: the record as last saved at a step's
end (never a step half-recorded), the in-flight steps named in it, the runner containers of this
process removed. Builds and pushes end with the process: the engine cancels a request whose
client hung up. Nothing is tagged that did not pass validation, because a push only ever starts
after it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from ngc_builder.clock import now
from ngc_builder.errors import Interrupted as Interrupted
from ngc_builder.pipeline.run import RunServices, RunState
from ngc_builder.records.record import ImageRecord, load_record, save_record
from ngc_builder.services.engine import remove_own_containers

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted in the main thread; a second one while stopping
    is ignored, so the cleanup that keeps the record honest is not cut short. Only the main
    thread can set handlers; elsewhere (a test calling the command) the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(number: int, frame: FrameType | None) -> None:
        for kind in STOP_SIGNALS:
            signal.signal(kind, signal.SIG_IGN)
        raise Interrupted(number)

    previous = {kind: signal.signal(kind, stop) for kind in STOP_SIGNALS}
    try:
        yield
    finally:
        for kind, handler in previous.items():
            signal.signal(kind, handler)


# A step in flight -> the part of the image's record it fills in.
STEP_RECORDS = {"build": "build", "validate": "validation", "size": "push", "push": "push",
                "promote": "push"}


def stop_run(state: RunState, services: RunServices, reason: Interrupted) -> None:
    """Freeze the record, write it as last saved with the interrupted steps named, remove this
    process's containers, and say per image which step was cut short."""
    in_flight = state.freeze()
    services.ui.mute()
    saved = load_record(state.record_file)
    if saved is not None:
        for name, step in in_flight.items():
            _mark(saved.images.get(name), step, reason.signal_name)
        saved.interrupted = f"{reason.signal_name} at {now()}"
        save_record(saved, state.record_file)
    removed = remove_own_containers(services.engine)
    for name, step in sorted(in_flight.items()):
        services.ui.problem(name, f"{step}: interrupted by {reason.signal_name}; a rerun starts "
                             "this step again", always=True)
    if removed:
        services.ui.step("release", f"removed {removed} container(s) of this run", always=True)


def _mark(image: ImageRecord | None, step: str, signal_name: str) -> None:
    """The record part of `step`; another platform's steps ("build linux/arm64") are that
    platform's build or validation."""
    if image is None:
        return
    kind, _, platform = step.partition(" ")
    holder = image.platforms.get(platform) if platform else image
    if holder is None or kind not in STEP_RECORDS:
        return
    part = getattr(holder, STEP_RECORDS[kind])
    if part.status != "ok":
        part.status, part.error = "pending", f"interrupted by {signal_name}"
