"""One run of the release pipeline, in four parts: what it builds (frozen inputs), how it may
act (frozen policy), what it talks to (services handed in), and what it keeps (the record,
shared by the worker threads under a lock)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from ngc_builder.cache.network import BuildNetwork
from ngc_builder.lock.models import ReleaseLock
from ngc_builder.pipeline.console import Ui
from ngc_builder.plan.dag import ReleasePlan
from ngc_builder.records.record import ReleaseRecord, save_record
from ngc_builder.render.contexts import RenderedImage
from ngc_builder.render.keys import ImageKey
from ngc_builder.services.engine import Engine
from ngc_builder.services.registry import Registry


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


@dataclass(frozen=True)
class RunPolicy:
    """How the run may act."""

    push: bool = True
    gpu_mode: str = "none"
    jobs: int = 2
    force: bool = False  # move release tags that point elsewhere (recorded)
    aliases: tuple[str, ...] = ()
    # False: build every image anew even if the registry holds its key (rebuild, bench).
    reuse_published: bool = True
    no_cache: bool = False  # build without the engine's layer cache


@dataclass(frozen=True)
class RunServices:
    """What the run talks to; the registry is the plan's."""

    engine: Engine
    ui: Ui


@dataclass
class RunState:
    """The record the workers fill in, and what keeps them from stepping on each other."""

    record: ReleaseRecord
    record_file: Path
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _image_locks: dict[str, threading.Lock] = field(default_factory=dict)
    _published: dict[str, threading.Event] = field(default_factory=dict)
    _doing: dict[str, str] = field(default_factory=dict)  # image -> the step it is in
    _frozen: bool = False

    def save(self) -> None:
        with self._lock:
            if not self._frozen:
                save_record(self.record, self.record_file)

    def doing(self, name: str, step: str | None) -> None:
        """`name` is now in `step` (None: done), for an interruption to name."""
        with self._lock:
            if step is None:
                self._doing.pop(name, None)
            else:
                self._doing[name] = step

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
        return self.services.engine

    @property
    def ui(self) -> Ui:
        return self.services.ui
