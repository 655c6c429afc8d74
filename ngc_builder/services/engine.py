"""The Docker engine service: the exact docker-py calls the builder makes, as Protocols, and
the real engine over docker-py (one place that connects, so every stage gets the same errors).

`Engine.api` names the low-level `docker.APIClient` calls and `Engine.containers` the
`ContainerCollection` calls, with the keyword arguments the stages pass. Unit tests hand in
fakes that mypy checks against these Protocols.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
from collections.abc import Iterable, Mapping
from typing import IO, Any, Protocol

import docker
import docker.errors
import requests

from ngc_builder.errors import EngineError, EngineSetupError
from ngc_builder.services.engine_connect import (
    env_tls_problem,
    url_problem,
)
from ngc_builder.services.environment import gpu_mode as gpu_mode

SETUP_HINT = "start one with `make engine` (ci/setup-engine.sh)"
KEY_LABEL = "org.ngc-builder.key"
# On every container this process starts: an interrupted run removes exactly its own.
PROCESS_LABEL = "org.ngc-builder.process"
# host:pid-token: a later run on the same host sweeps the containers of a killed one.
PROCESS_ID = f"{socket.gethostname()}:{os.getpid()}-{secrets.token_hex(4)}"
Chunk = Mapping[str, Any]  # one decoded JSON message of a build, push or pull stream
Inspection = dict[str, Any]  # the engine's JSON about an image, as docker-py returns it


class EngineApi(Protocol):
    """The `docker.APIClient` calls the builder makes."""

    def build(self, *, path: str, tag: str, labels: dict[str, str], rm: bool, forcerm: bool,
              pull: bool, decode: bool, nocache: bool, network_mode: str | None = None,
              extra_hosts: dict[str, str] | None = None) -> Iterable[Chunk]: ...

    def inspect_network(self, net_id: str) -> Inspection: ...

    def create_network(self, name: str, *, driver: str, internal: bool,
                       check_duplicate: bool) -> Any: ...

    def images(self, *, filters: dict[str, str]) -> list[Inspection]: ...

    def inspect_image(self, image: str) -> Inspection: ...

    def history(self, image: str) -> list[Inspection]: ...

    def inspect_distribution(self, image: str) -> Inspection: ...

    def tag(self, image: str, repository: str, tag: str) -> bool: ...

    def push(self, repository: str, *, tag: str, stream: bool,
             decode: bool) -> Iterable[Chunk]: ...

    def pull(self, repository: str, *, stream: bool, decode: bool,
             tag: str | None = None) -> Iterable[Chunk]: ...

    def remove_image(self, image: str, noprune: bool = False) -> Any: ...

    def import_image_from_file(self, filename: str, *, repository: str, tag: str,
                               changes: list[str]) -> Any: ...

    def load_image(self, data: IO[bytes]) -> Iterable[Chunk]: ...

    def get_image(self, image: str) -> Iterable[bytes]: ...

    def containers(self, *, all: bool, filters: dict[str, str]) -> list[Inspection]: ...

    def remove_container(self, container: str, *, force: bool) -> Any: ...


class Container(Protocol):
    """The `docker.models.containers.Container` calls the builder makes."""

    def start(self) -> Any: ...

    def wait(self, *, timeout: int) -> dict[str, Any]: ...

    def logs(self, *, stdout: bool, stderr: bool) -> bytes: ...

    def export(self, chunk_size: int) -> Iterable[bytes]: ...

    def remove(self, *, force: bool) -> Any: ...


class EngineContainers(Protocol):
    """The `docker.models.containers.ContainerCollection` calls the builder makes."""

    def create(self, image: str, command: list[str], *, network_disabled: bool,
               entrypoint: list[str] | None = None, environment: dict[str, str] | None = None,
               device_requests: list[Any] | None = None, shm_size: str | None = None,
               user: str | None = None, read_only: bool = False,
               tmpfs: dict[str, str] | None = None,
               network_mode: str | None = None) -> Container: ...

    def run(self, image: str, command: list[str], *, entrypoint: list[str], remove: bool,
            network_disabled: bool, stderr: bool) -> bytes: ...


class Engine(Protocol):
    """One Docker engine (one build host)."""

    @property
    def api(self) -> EngineApi: ...

    @property
    def containers(self) -> EngineContainers: ...


class DockerEngine:
    """One engine through docker-py: the one at `url` (a test's second engine), else the one at
    DOCKER_HOST (or the local socket). Each thread gets a client of its own: docker-py clients
    are not thread-safe, and workers run in parallel."""

    def __init__(self, timeout: int = 900, url: str | None = None,
                 name: str | None = None) -> None:
        self.timeout = timeout
        self.url = url
        self.where = url or os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        self.name = name or self.where
        self._local = threading.local()

    @property
    def api(self) -> EngineApi:
        api: EngineApi = self._client().api
        return api

    @property
    def containers(self) -> EngineContainers:
        return LabelledContainers(self._client().containers)

    def info(self) -> dict[str, Any]:
        """`docker info` of this engine (its runtimes, its devices)."""
        return dict(self._client().info())

    def _client(self) -> Any:  # docker-py has no type hints: Any stops here
        if not hasattr(self._local, "client"):
            if (problem := url_problem(self.where)) is not None:  # else a bare ValueError
                raise EngineSetupError(self._named(), problem)
            self._local.client = (docker.from_env(timeout=self.timeout) if self.url is None
                                  else docker.DockerClient(base_url=self.url,
                                                           timeout=self.timeout))
        return self._local.client

    def _named(self) -> str:
        where = self.where if len(self.where) <= 120 else self.where[:120] + "..."
        if self.url is None:
            return f"{where} (DOCKER_HOST)" if os.environ.get("DOCKER_HOST") else where
        return where if self.name == self.where else f"{self.name} ({where})"

    def ping(self) -> None:
        """EngineError unless the engine answers; a TLS folder that is not there is named."""
        tls = env_tls_problem() if self.url is None else None
        if tls:
            raise EngineSetupError(self._named(), tls)
        try:
            self._client().ping()
        except (docker.errors.DockerException, requests.RequestException) as exc:
            raise EngineError(f"no Docker engine answers at {self._named()} ({exc}); "
                              f"{SETUP_HINT}") from None


class LabelledContainers:
    """docker-py's containers, each one labelled with this process (`PROCESS_LABEL`)."""

    def __init__(self, collection: Any) -> None:
        self.collection = collection

    def create(self, image: str, command: list[str], **options: Any) -> Container:
        container: Container = self.collection.create(image, command, labels=_own(), **options)
        return container

    def run(self, image: str, command: list[str], **options: Any) -> bytes:
        return bytes(self.collection.run(image, command, labels=_own(), **options))


def discard(container: Container) -> None:
    """A container this process started removed, whatever state it is in. One the engine is
    already removing (409 `removal ... already in progress`) or has removed is what was
    wanted, and a failure here must not hide the step's own result: one left behind carries
    this process's label, which the next run's sweep removes."""
    with contextlib.suppress(docker.errors.DockerException, requests.RequestException):
        container.remove(force=True)


def _own() -> dict[str, str]:
    return {PROCESS_LABEL: PROCESS_ID}


def remove_own_containers(engine: Engine) -> int:
    """Remove every container this process started (an interrupted validation's runner);
    how many were there. An engine that is gone has none left to remove."""
    try:
        found = engine.api.containers(all=True, filters={"label": f"{PROCESS_LABEL}={PROCESS_ID}"})
        for container in found:
            engine.api.remove_container(container["Id"], force=True)
    except (docker.errors.DockerException, requests.RequestException):
        return 0
    return len(found)


def remove_stale_containers(engine: Engine) -> int:
    """Remove the containers of builder processes on this host that are gone (killed with
    SIGKILL, a machine that rebooted): their runners would otherwise stay forever."""
    try:
        found = engine.api.containers(all=True, filters={"label": PROCESS_LABEL})
        stale = [c["Id"] for c in found if _of_dead_process(c["Labels"][PROCESS_LABEL])]
        for container in stale:
            engine.api.remove_container(container, force=True)
    except (docker.errors.DockerException, requests.RequestException):
        return 0
    return len(stale)


def _of_dead_process(process_id: str) -> bool:
    host, _, rest = process_id.rpartition(":")
    pid = rest.partition("-")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another host's process (a remote engine): not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False


def connect(timeout: int = 900) -> DockerEngine:
    """An engine that has answered a ping, or EngineError."""
    engine = DockerEngine(timeout)
    engine.ping()
    return engine


def connect_if_running() -> DockerEngine | None:
    """An engine when one answers, else None (`plan` works without an engine)."""
    try:
        return connect(timeout=10)
    except EngineError:
        return None


def image_exists(engine: Engine, ref: str) -> bool:
    try:
        engine.api.inspect_image(ref)
    except docker.errors.ImageNotFound:
        return False
    return True


def find_built(engine: Engine, key: str) -> Inspection | None:
    """A local image already built from exactly this content key, from any earlier run.

    Reusing it (instead of letting the engine rebuild from its cache) keeps the image ID, and so
    the cache of every image built on it. An image with a parent is the builder's own, before
    its config was written again (assemble/imageconfig.py): never the one to reuse.
    """
    try:
        found = engine.api.images(filters={"label": f"{KEY_LABEL}={key}"})
        return next((dict(image) for image in found if not image.get("ParentId")
                     and made_by_key(engine, image["Id"], key)), None)
    except (docker.errors.DockerException, requests.RequestException):
        return None


def made_by_key(engine: Engine, image_id: str, key: str) -> bool:
    """Whether the key label was set by the build that made the image's top layers.

    Labels are inherited: an image built FROM ours (`RUN rm ...` on top) carries our key too,
    and reusing it would ship its changes as ours. The builder's labels are the last
    instructions of its build, so the key must be among the LABEL entries above every other.
    """
    wanted = f"LABEL {KEY_LABEL}={key}"
    for entry in engine.api.history(image_id):
        created_by = str(entry.get("CreatedBy") or "")
        if wanted in created_by:
            return True
        if "#(nop)  LABEL " not in created_by:
            return False
    return False
