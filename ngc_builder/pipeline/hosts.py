"""The build hosts of one run: each host's engine, slots and GPU mode, which host each image was
placed on, the copies of parents a host got for a child (pulled or built there), and the pull
bandwidth measured so far (the pull-or-build rule weighs it against a parent's build time).

It lives in `pipeline/`, not `services/`, because a host also carries what the run set up on it
(its build network, its OS images): `services` may not import the cache's network.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ngc_builder.cache.network import BuildNetwork
from ngc_builder.services.engine import Engine
from ngc_builder.services.environment import setting_float

DEFAULT_HOST = "default"  # no engines in the site file: the engine at DOCKER_HOST
# Until a pull of this run measured it: a registry on the build network (measured here: about
# 60 MB/s for a local registry's pull of the CUDA stack's layer, gunzip-bound).
ASSUMED_PULL_MBPS = 60.0


@dataclass
class BuildHost:
    name: str
    engine: Engine
    jobs: int | None = None  # None: the run's --jobs (one host)
    gpu_mode: str | None = None  # None: the run's (one host: the machine the CLI runs on)
    network: BuildNetwork | None = None  # None: the run's inputs'
    os_image_ids: dict[str, str] | None = None  # None: the run's inputs'


@dataclass
class BuildHosts:
    """Thread-safe: the workers place, copy and measure at the same time."""

    hosts: list[BuildHost]
    _placed: dict[str, str] = field(default_factory=dict)  # image -> host name
    _copies: dict[tuple[str, str], str] = field(default_factory=dict)  # (host, image) -> ID
    _pulled: list[tuple[int, float]] = field(default_factory=list)  # (bytes, seconds)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def several(self) -> bool:
        return len(self.hosts) > 1

    def slots(self, default_jobs: int) -> dict[str, int]:
        return {host.name: host.jobs or default_jobs for host in self.hosts}

    def get(self, name: str) -> BuildHost:
        return next(host for host in self.hosts if host.name == name)

    def place(self, image: str, host: str) -> None:
        with self._lock:
            self._placed[image] = host

    def host_for(self, image: str) -> BuildHost:
        """The host `image` was placed on; the first one before placement (OS images)."""
        with self._lock:
            name = self._placed.get(image)
        return self.get(name) if name is not None else self.hosts[0]

    def note_copy(self, host: str, image: str, image_id: str) -> None:
        with self._lock:
            self._copies[(host, image)] = image_id

    def copy_on(self, host: str, image: str) -> str | None:
        """The ID of `image` on `host` when the run brought it there for a child."""
        with self._lock:
            return self._copies.get((host, image))

    def note_pull(self, size_bytes: int, seconds: float) -> None:
        with self._lock:
            self._pulled.append((size_bytes, seconds))

    def pull_bytes_per_second(self) -> float:
        """Measured over this run's pulls, else NGC_PULL_MBPS, else the assumed figure."""
        with self._lock:
            size, seconds = sum(b for b, _ in self._pulled), sum(s for _, s in self._pulled)
        if size > 0 and seconds > 0:
            return size / seconds
        return setting_float("NGC_PULL_MBPS", ASSUMED_PULL_MBPS) * 1e6


def one_host(engine: Engine) -> BuildHosts:
    """Today's run: the one engine, everything else the run's own."""
    return BuildHosts([BuildHost(DEFAULT_HOST, engine)])
