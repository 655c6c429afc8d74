"""One run of the release pipeline, in four parts: what it builds (frozen inputs), how it may
act (frozen policy), what it talks to (services handed in), and what it keeps (the record,
shared by the worker threads under a lock)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ngc_builder import clock
from ngc_builder.cache.network import BuildNetwork
from ngc_builder.lock.models import PipPackage, PlatformLock, ReleaseLock
from ngc_builder.manifest.site import SlurmSite
from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.options import RunPolicy as RunPolicy
from ngc_builder.plan.dag import ReleasePlan
from ngc_builder.publish.cosign_keys import SigningKey
from ngc_builder.records.record import ReleaseRecord, Span, save_record
from ngc_builder.render.content_keys import ImageKey
from ngc_builder.render.contexts import RenderedImage
from ngc_builder.services.engine import Engine
from ngc_builder.services.registry import Registry
from ngc_builder.services.slurm import SlurmCluster


@dataclass(frozen=True)
class PlatformInputs:
    """What the run builds for another platform (`linux/arm64`) on this host."""

    renders: dict[str, RenderedImage]  # image -> its render for the platform
    lock: PlatformLock
    os_images: dict[str, str]  # OS base name -> the local image of the platform's OS lock
    wheel_path: Callable[[PipPackage], Path]  # the package cache's file of a locked wheel
    pythons: dict[str, str]  # OS base name -> its venv's Python (X.Y)


@dataclass(frozen=True)
class RunInputs:
    """What the run builds: the plan, its rendered contexts and content keys."""

    plan: ReleasePlan
    rendered: dict[str, RenderedImage]
    keys: dict[str, ImageKey]
    context_dir: Path
    report_dir: Path
    os_image_ids: dict[str, str]  # OS base name -> the local image a base layer is built FROM
    revision: str
    source: str
    baselines_file: Path | None = None  # T3 floors and medians; passing images add theirs
    network: BuildNetwork | None = None  # where builds run and find the package cache
    lock: ReleaseLock | None = None  # what every image installs (its SBOM is made from it)
    lock_errors: dict[str, str] = field(default_factory=dict)  # images the lock could not resolve
    manifest: Path | None = None  # the release manifest (its lock beside it): attested
    platforms: dict[str, PlatformInputs] = field(default_factory=dict)  # the other platforms


@dataclass(frozen=True)
class ClusterValidation:
    """`release --validate-on slurm`: each image validated as a job of the site's cluster."""

    cluster: SlurmCluster
    site: SlurmSite  # runtime docker or pyxis: the node pulls the pushed candidate

    @property
    def gpu_mode(self) -> str:
        return "required" if self.site.gpus > 0 else "none"


@dataclass(frozen=True)
class RunServices:
    """What the run talks to: one engine (every image is built, validated and pushed on it);
    the registry is the plan's."""

    engine: Engine
    ui: Ui
    cluster: ClusterValidation | None = None  # validation on Slurm instead of the build host
    signing: SigningKey | None = None  # what every promoted image is signed with


@dataclass
class RunState:
    """The record the workers fill in, and what keeps them from stepping on each other."""

    record: ReleaseRecord
    record_file: Path
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _image_locks: dict[str, threading.Lock] = field(default_factory=dict)
    _published: dict[str, threading.Event] = field(default_factory=dict)
    _platforms_built: dict[str, threading.Event] = field(default_factory=dict)
    _scheduled: set[str] = field(default_factory=set)  # the images this run goes through
    _doing: dict[str, str] = field(default_factory=dict)  # image -> the step it is in
    _frozen: bool = False
    _open: dict[str, Span] = field(default_factory=dict)  # image -> its step's span
    _origin: float = clock.STARTED  # the timeline's zero: this process's start

    def __post_init__(self) -> None:
        # A rerun's timeline is its own; what the process did before (checks, renders, the
        # lock) is its first span.
        self.record.timeline = [Span(image="release", step="prepare", start=0.0,
                                     end=round(time.time() - self._origin, 1))]
        self.record.timeline_started = self._origin

    def save(self) -> None:
        with self._lock:
            if not self._frozen:
                save_record(self.record, self.record_file)

    def doing(self, name: str, step: str | None) -> None:
        """`name` is now in `step` (None: done), for an interruption to name; the step before
        it ends on the timeline and this one starts."""
        with self._lock:
            moment = round(time.time() - self._origin, 1)
            previous = self._open.pop(name, None)
            if previous is not None:
                previous.end = moment
            if step is None:
                self._doing.pop(name, None)
                return
            self._doing[name] = step
            self._open[name] = Span(image=name, step=step, start=moment,
                                    worker=threading.current_thread().name)
            self.record.timeline.append(self._open[name])

    @contextmanager
    def span(self, name: str, step: str) -> Iterator[None]:
        """A step of the run itself (`cache`, `os-<base>`) on the timeline."""
        self.doing(name, step)
        try:
            yield
        finally:
            self.doing(name, None)

    def step_of(self, name: str) -> str | None:
        with self._lock:
            return self._doing.get(name)

    def freeze(self) -> dict[str, str]:
        """No save from now on (the workers go on until the process ends, and their records
        of cut-short steps would be wrong); which image was in which step."""
        with self._lock:
            self._frozen = True
            return dict(self._doing)

    def image_lock(self, name: str) -> threading.Lock:
        with self._lock:
            return self._image_locks.setdefault(name, threading.Lock())

    def scheduled(self, names: list[str]) -> None:
        """These images go through this run: their children wait for their events."""
        with self._lock:
            self._scheduled.update(names)

    def platforms_built(self, name: str) -> threading.Event:
        """Set once the image's other platforms are built (or failed, or never will be): a
        child's build of another platform needs the parent's. Set already for an image this
        run does not go through."""
        with self._lock:
            event = self._platforms_built.setdefault(name, threading.Event())
            if name not in self._scheduled:
                event.set()
            return event

    def published(self, name: str) -> threading.Event:
        """Set once the image's publish step is over (pushed, failed or not attempted)."""
        with self._lock:
            return self._published.setdefault(name, threading.Event())


@dataclass(frozen=True)
class Run:
    inputs: RunInputs
    policy: RunPolicy
    services: RunServices
    state: RunState

    @property
    def registry(self) -> Registry:
        return self.inputs.plan.registry

    @property
    def engine(self) -> Engine:
        """Where every image of the run is built, validated and pushed."""
        return self.services.engine

    @property
    def ui(self) -> Ui:
        return self.services.ui
