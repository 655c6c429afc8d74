"""The release pipeline: images in DAG order, siblings in parallel; per image
skip-if-published -> build -> validate -> size gate -> push candidate -> promote. Children start
once their parent is validated; a child's push waits for its parent's, so shared layers are
uploaded once and mounted by the children.

An image whose build or validation failed is never pushed; images built on it are blocked; its
siblings carry on. Every step lands in the release record at once (under a lock: workers share
it). Each worker thread talks to the engine through its own Docker client.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker.errors
import requests

from ngc_builder.errors import StepError
from ngc_builder.pipeline import lifecycle as imagesteps
from ngc_builder.pipeline.console import Ui
from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.records.record import ImageRecord, ReleaseRecord, now, save_record
from ngc_builder.render.contexts import RenderedImage
from ngc_builder.render.keys import ImageKey
from ngc_builder.services.engine import connect


@dataclass
class Run:
    """One run of the pipeline: its inputs, the engine, and the record it keeps."""

    main_client: Any
    plan: ReleasePlan
    rendered: dict[str, RenderedImage]
    keys: dict[str, ImageKey]
    context_dir: Path
    report_dir: Path
    record: ReleaseRecord
    record_file: Path
    os_image_ids: dict[str, str]
    revision: str
    source: str
    gpu_mode: str
    push: bool
    ui: Ui
    # T3 floors and medians; measured medians of passing images are added to it.
    baselines_file: Path | None = None
    jobs: int = 2
    force: bool = False
    aliases: list[str] = field(default_factory=list)
    reuse_published: bool = True
    no_cache: bool = False  # build without the engine's layer cache
    new_client: Callable[[], Any] = connect  # one per worker thread
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _local: threading.local = field(default_factory=threading.local)
    _image_locks: dict[str, threading.Lock] = field(default_factory=dict)
    _published: dict[str, threading.Event] = field(default_factory=dict)
    events: queue.Queue[tuple[str, str]] = field(default_factory=queue.Queue)

    @property
    def client(self) -> Any:
        """The calling thread's own Docker client (docker-py clients are not thread-safe)."""
        if threading.current_thread() is threading.main_thread():
            return self.main_client
        if not hasattr(self._local, "client"):
            self._local.client = self.new_client()
        return self._local.client

    def save(self) -> None:
        with self._lock:
            save_record(self.record, self.record_file)

    def image_lock(self, name: str) -> threading.Lock:
        with self._lock:
            return self._image_locks.setdefault(name, threading.Lock())

    def published(self, name: str) -> threading.Event:
        """Set once the image's publish step is over (pushed, failed or not attempted)."""
        with self._lock:
            return self._published.setdefault(name, threading.Event())


def run_images(run: Run, images: list[ImageSpec]) -> None:
    run.ui.plan([spec.name for spec in images])
    for spec in images:  # every record exists before any worker starts
        record = run.record.images.get(spec.name) or ImageRecord(
            name=spec.name, kind=spec.kind, parent=spec.parent)
        record.expect_failure = spec.entry.expect_failure if spec.entry else None
        run.record.images[spec.name] = record
    _schedule(run, images)
    run.record.finished = now()
    run.save()


def _schedule(run: Run, images: list[ImageSpec]) -> None:
    """Start an image as soon as its parent is validated (children build while the parent
    pushes); at most `run.jobs` at a time. Workers report "ready" and "done" on a queue."""
    waiting = list(images)
    names = {spec.name for spec in images}
    ready: set[str] = set()
    futures: list[Future[None]] = []
    running = 0
    with ThreadPoolExecutor(max_workers=max(1, run.jobs), thread_name_prefix="image") as pool:
        while waiting or running:
            for spec in [s for s in waiting if s.parent is None or s.parent in ready
                         or s.parent not in names]:
                waiting.remove(spec)
                futures.append(pool.submit(_one_image, run, spec))
                running += 1
            name, event = run.events.get()
            ready.add(name)
            running -= event == "done"
    for future in futures:
        future.result()  # a bug in a worker is not swallowed


def _one_image(run: Run, spec: ImageSpec) -> None:
    record = run.record.images[spec.name]
    try:
        _process(run, spec, record)
    except StepError as exc:
        run.ui.problem(spec.name, f"{exc.step}: {exc.message}")
    except (docker.errors.DockerException, requests.RequestException) as exc:
        # The engine went away between steps: fail this image, keep the record honest.
        imagesteps.fail_pending(record, f"engine: {exc.__class__.__name__}: {exc}")
        run.ui.problem(spec.name, f"engine: {exc}")
    finally:
        try:
            _tell_expectation(run, record)
            run.save()
        finally:  # the scheduler must hear of it, whatever happened above
            run.published(spec.name).set()
            run.events.put((spec.name, "done"))


def _process(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    if imagesteps.skip_published(run, spec, record) or imagesteps.skip_known_failure(
            run, spec, record):
        return
    parent_id = parent_image(run, spec)
    if parent_id is None:
        parent = spec.parent or f"OS {spec.base}"
        imagesteps.block(record, f"{parent} did not pass")
        raise StepError(spec.name, "build", f"blocked: {parent} did not pass")
    imagesteps.build(run, spec, record)
    imagesteps.validate(run, spec, record)
    imagesteps.size_gate(run, spec, record)
    run.events.put((spec.name, "ready"))  # children may build on it while it is pushed
    if run.push:
        imagesteps.publish(run, spec, record)
    else:
        record.push.status = "skipped"
        record.push.error = "--no-push"


def parent_image(run: Run, spec: ImageSpec) -> str | None:
    """The parent's local image ID, pulled from the registry when this run skipped it."""
    if spec.parent is None:
        return run.os_image_ids.get(spec.base)
    parent = run.record.images.get(spec.parent)
    # A failed push of the parent does not block children: they still build and validate,
    # and their own push fails (loudly) while the registry is down.
    if parent is None or parent.build.status != "ok" or parent.validation.status != "ok":
        return None
    with run.image_lock(spec.parent):  # two children must not pull the same parent twice
        return imagesteps.ensure_local(run, run.plan.get(spec.parent), parent)


def _tell_expectation(run: Run, record: ImageRecord) -> None:
    if record.outcome == "xfail":
        run.ui.step(record.name, f"expected failure ({record.expect_failure})")
    elif record.outcome == "xpass":
        run.ui.problem(record.name, "passed although the manifest expects it to fail: "
                                    "remove its expect_failure")
