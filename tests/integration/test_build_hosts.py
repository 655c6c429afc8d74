"""A release spread over two real build hosts: the main engine and a second dockerd of the
fault suite's (its own data root, socket and bridge; the main engine is never touched), listed
in a site file with one slot each, so a child meets a parent on the other host."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import pytest

from ngc_builder.errors import EngineError
from ngc_builder.services.engine import DockerEngine
from tests.faults.engines import SecondEngine, copy_image, second_engine, unavailable
from tests.faults.project import slow_project
from tests.faults.running import Release, namespace
from tests.faults.tls import TlsFiles, free_port, make_certs

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages"),
              # the multi-host scheduler: on demand (docs/testing.md)
              pytest.mark.extended]
MAIN = "main"
SECOND = "second"


@contextlib.contextmanager
def _short_folder() -> Iterator[Path]:
    """The second engine's sockets live in it: a unix socket path stays under 104 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="ngch-"))
    try:
        yield folder / "engine"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Served:
    """The second engine, also served over tcp with TLS (client certificates required)."""

    engine: SecondEngine
    url: str  # tcp://127.0.0.1:PORT
    tls: TlsFiles


@pytest.fixture
def engine(trixie_os: str) -> Iterator[SecondEngine]:
    with _engine(trixie_os, tls=False) as served:
        yield served.engine


@pytest.fixture
def tls_engine(trixie_os: str) -> Iterator[Served]:
    with _engine(trixie_os, tls=True) as served:
        yield served


@contextlib.contextmanager
def _engine(os_ref: str, tls: bool) -> Iterator[Served]:
    """A second engine with the OS base copied in (it has no bootstrap of its own; `trixie_os`
    made the base on the main engine if it was missing)."""
    if (reason := unavailable()) is not None:
        pytest.skip(reason)
    with _short_folder() as folder:
        files = make_certs(folder.parent / "tls")
        url = f"tcp://127.0.0.1:{free_port()}"
        listen, config = ((url,), files.daemon_config()) if tls else ((), {})
        with second_engine(folder, listen=listen, config=config) as started:
            copy_image(os_ref, started)
            yield Served(started, url, files)


def write_site(path: Path, second: Served, jobs: int = 1) -> Path:
    """The main engine by its unix socket, the second over tcp with the client's TLS files."""
    main = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    path.write_text(f"engines:\n  - name: {MAIN}\n    url: {main}\n    jobs: {jobs}\n"
                    f"  - name: {SECOND}\n    url: {second.url}\n    jobs: {jobs}\n"
                    f"    tls: {second.tls.client}\n")
    return path


def _only_the_sites_certificates_get_in(served: Served, elsewhere: TlsFiles) -> None:
    """The tcp address is really behind TLS: plain HTTP and another CA's client certificate
    are refused; the site's folder gets in, whatever CA bundle the environment names."""
    for refused in (DockerEngine(url=served.url, timeout=10),
                    DockerEngine(url=served.url, tls=elsewhere.client, timeout=10)):
        with pytest.raises(EngineError):
            refused.ping()
    DockerEngine(url=served.url, tls=served.tls.client, timeout=10).ping()


def _client(host: str, second: SecondEngine) -> docker.DockerClient:
    return docker.from_env() if host == MAIN else docker.DockerClient(base_url=second.host)


def _holds_digest(client: docker.DockerClient, digest: str) -> bool:
    return any(ref.endswith("@" + digest) for image in client.images.list()
               for ref in image.attrs.get("RepoDigests") or [])


def _holds_key(client: docker.DockerClient, key: str) -> bool:
    return bool(client.images.list(filters={"label": f"org.ngc-builder.key={key}"}))


def _check_parent_brought(run: Release, images: dict[str, Any], child: str,
                          second: SecondEngine) -> str:
    """How the child's host got the parent, as the run said, proven on that host's engine."""
    host, parent = images[child]["build"]["host"], images[child]["parent"]
    said = re.search(rf"\b{child}: on {host}: (pulling|building|{parent} is there already)",
                     run.stderr())
    assert said is not None, run.stderr()[-3000:]
    client = _client(host, second)
    if said.group(1) == "pulling":
        assert _holds_digest(client, images[parent]["push"]["digest"])
    else:
        assert _holds_key(client, images[parent]["build"]["key"])
    return said.group(1)


def test_a_release_over_two_hosts_builds_on_both_and_brings_parents_across(
    tmp_path: Path, tls_engine: Served, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The main engine over its unix socket, the second over tcp with TLS."""
    # A build machine whose environment trusts another CA (a proxy's): not the engine's.
    elsewhere = make_certs(tmp_path / "elsewhere")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(elsewhere.folder / "ca.pem"))
    _only_the_sites_certificates_get_in(tls_engine, elsewhere)
    engine = tls_engine.engine
    project = slow_project(tmp_path / "project", build_seconds=3)
    site = write_site(tmp_path / "site.yaml", tls_engine)
    run = Release(project.manifest, namespace("hosts"), tmp_path / "build",
                  env={"REQUESTS_CA_BUNDLE": str(elsewhere.folder / "ca.pem")},
                  extra=["--site", str(site)])
    assert run.run(timeout=900) == 0, run.stderr()[-3000:]
    images = json.loads(run.stdout_file.read_text())["images"]
    hosts = {name: image["build"]["host"] for name, image in images.items()}
    print(hosts, "\n".join(line for line in run.stderr().splitlines() if ": on " in line))
    assert set(hosts.values()) == {MAIN, SECOND}, hosts
    crossed = [name for name, image in images.items()
               if image["parent"] and hosts[name] != hosts[image["parent"]]]
    assert crossed, hosts
    for child in crossed:
        _check_parent_brought(run, images, child, engine)
    for name, image in images.items():
        assert image["validation"]["verdict"] == "pass", (name, image["validation"])
        assert image["push"]["status"] == "ok", (name, image["push"])
        reference = f"{run.registry}/{name}@{image['push']['digest']}"
        docker.from_env().images.pull(reference)  # raises unless the registry serves it
        pulled = docker.from_env().images.get(reference)
        assert pulled.labels["org.ngc-builder.key"] == image["build"]["key"]
