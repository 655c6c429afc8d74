"""Debian packages locked for real and installed from the package cache alone.

The lock is resolved with the target release's apt (`resolve_apt`), the .debs are fetched by
the host from its mirror and laid out as the cache does, and the image is built on an
internal network whose only reachable address is the cache server: a build that succeeds
there got every package from the cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import docker.errors
import pytest
import requests

from ngc_builder.cache.apt_repo import (
    cache_file,
    deb_stanza,
    install_command,
    packages_index,
    repo_path,
)
from ngc_builder.lock.apt import AptResolution, resolve_apt
from ngc_builder.lock.models import AptPackage
from ngc_builder.services.streams import StreamError, consume_build

pytestmark = pytest.mark.integration

OS_REF = "ngc-local/os-debian-trixie:13"
BASE = ["python3", "python3-venv", "ca-certificates", "libgomp1"]
LAYER = ["libquadmath0"]


@dataclass(frozen=True)
class Locked:
    resolution: AptResolution
    layer: list[AptPackage]
    debs: Path  # the real .debs, as the cache keeps them


@pytest.fixture(scope="module")
def locked(docker_client: Any, tmp_path_factory: pytest.TempPathFactory,
           trixie_os: str, debian_mirror: str) -> Locked:
    mirror = debian_mirror
    resolution = resolve_apt(docker_client, OS_REF, BASE, {"quad": LAYER}, lambda line: None)
    layer = resolution.layers["quad"]
    assert isinstance(layer, list), layer
    debs = tmp_path_factory.mktemp("debs")
    for package in [*resolution.base, *layer]:
        _download(mirror, package, debs)
    return Locked(resolution, layer, debs)


def _download(mirror: str, package: AptPackage, root: Path) -> None:
    reply = requests.get(f"{mirror}/{package.file}", timeout=120)
    reply.raise_for_status()
    assert hashlib.sha256(reply.content).hexdigest() == package.sha256, package.file
    path = root / cache_file(package)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(reply.content)


def test_the_lock_names_the_closure_once_sorted(locked: Locked) -> None:
    base = locked.resolution.base
    names = [p.name for p in base]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert set(BASE) <= set(names) and "python3-minimal" in names
    assert [p.name for p in locked.layer] == ["libquadmath0"]
    assert all(p.file.startswith("pool/main/") for p in [*base, *locked.layer])


def test_a_layer_that_cannot_be_installed_is_an_error_line(trixie_os: str, docker_client: Any,
                                                          locked: Locked) -> None:
    found = resolve_apt(docker_client, OS_REF, ["libgomp1"], {"bad": ["digits"]},
                        lambda line: None)
    assert found.layers == {"bad": "E: Unable to locate package digits"}
    assert [p.name for p in found.base] == ["libgomp1"]


def test_the_image_installs_exactly_the_lock_from_the_cache_only(
        docker_client: Any, locked: Locked, monkeypatch: pytest.MonkeyPatch) -> None:
    base, layer = locked.resolution.base, locked.layer
    with cache_build(docker_client, locked.debs, monkeypatch) as build:
        image = build([cache_install(locked.debs, base, BASE),
                       cache_install(locked.debs, layer, LAYER)])
        installed = _run(docker_client, image, "dpkg-query -W -f '${Package}=${Version}\\n'")
        assert {p.pin() for p in [*base, *layer]} <= set(installed.split())
        traces = _run(docker_client, image, "grep -rl ngc-cache /etc/apt /var/lib/apt "
                      "/var/cache/apt /var/log/apt; true")
        assert traces == ""
        # no list is left; apt's own lock and empty partial/ stay (their removal would leave
        # whiteouts dated the time of the build: render/repro.py)
        assert _run(docker_client, image, "ls -A /var/lib/apt/lists").split() == ["lock",
                                                                                  "partial"]
        assert _run(docker_client, image, "ls -A /var/lib/apt/lists/partial") == ""
        assert _run(docker_client, image, "ls -A /var/cache/apt").split() == ["archives"]
        sources = _run(docker_client, image, "cat /etc/apt/sources.list")
        assert "deb.debian.org" in sources  # the image keeps its own Debian mirror


def test_a_deb_whose_hash_is_not_the_locked_one_fails_the_build(
        docker_client: Any, locked: Locked, monkeypatch: pytest.MonkeyPatch) -> None:
    real = next(p for p in locked.resolution.base if p.name == "libgomp1")
    forged = real.model_copy(update={"sha256": hashlib.sha256(b"another file").hexdigest()})
    served = locked.debs / cache_file(forged)
    served.parent.mkdir(parents=True, exist_ok=True)
    served.write_bytes((locked.debs / cache_file(real)).read_bytes())
    with cache_build(docker_client, locked.debs, monkeypatch) as build, \
            pytest.raises(StreamError, match="Hash Sum mismatch"):
        build([cache_install(locked.debs, [forged], ["libgomp1"])])


def test_a_cache_that_serves_other_bytes_under_a_matching_index_is_refused_before_dpkg(
        docker_client: Any, locked: Locked, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoever answers as the cache writes the index too: its Packages file names the
    tampered .deb with the tampered hash, so apt's own check passes; the locked hash in the
    step itself refuses it, naming the package, before dpkg runs."""
    real = next(p for p in locked.resolution.base if p.name == "libgomp1")
    tampered = (locked.debs / cache_file(real)).read_bytes() + b"\0" * 64
    forged = real.model_copy(update={"sha256": hashlib.sha256(tampered).hexdigest(),
                                     "size": len(tampered)})
    (locked.debs / cache_file(forged)).parent.mkdir(parents=True, exist_ok=True)
    (locked.debs / cache_file(forged)).write_bytes(tampered)
    repo = repo_path([real])  # where the step, rendered from the lock, looks
    (locked.debs / repo).mkdir(parents=True, exist_ok=True)
    (locked.debs / repo / "Packages").write_text(packages_index(
        [(forged, deb_stanza(locked.debs / cache_file(real)))]), encoding="utf-8")
    refusal = (f"ngc-builder: libgomp1: sha256 {forged.sha256} is not the locked one: "
               "refused before dpkg")
    with cache_build(docker_client, locked.debs, monkeypatch) as build, \
            pytest.raises(StreamError, match=refusal) as failed:
        build([install_command(repo, [real], ["libgomp1"])])
    assert "Unpacking" not in str(failed.value) and "Setting up" not in str(failed.value)


def test_a_package_that_is_not_installed_at_its_locked_version_fails_the_build(
        docker_client: Any, locked: Locked, monkeypatch: pytest.MonkeyPatch) -> None:
    gomp = next(p for p in locked.resolution.base if p.name == "libgomp1")
    # Locked but never requested: nothing installs it, and the check must say so.
    lock = [gomp, *locked.layer]
    with cache_build(docker_client, locked.debs, monkeypatch) as build, \
            pytest.raises(StreamError, match=r"libquadmath0: locked .*, found not installed"):
        build([cache_install(locked.debs, lock, ["libgomp1"])])


def test_the_build_network_reaches_no_mirror(docker_client: Any, locked: Locked,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """What makes the tests above a proof: the image's own Debian sources are unreachable."""
    with cache_build(docker_client, locked.debs, monkeypatch) as build, \
            pytest.raises(StreamError, match="returned a non-zero code: 100"):
        # One try per source: apt's default retries, backing off, took 48 s to say the same.
        build(["apt-get -o Acquire::Retries=0 update --error-on=any"])


Build = Any  # (RUN texts) -> image ID


@contextlib.contextmanager
def cache_build(client: Any, debs: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Build]:
    """A builder of `FROM <trixie>` + RUN steps on an internal network where the cache
    server (serving `debs` on the network's gateway) is the only other host."""
    network = client.networks.create(f"ngc-apt-test-{secrets.token_hex(4)}", driver="bridge",
                                      internal=True)
    built: list[str] = []
    try:
        network.reload()
        gateway = network.attrs["IPAM"]["Config"][0]["Gateway"]
        with serving(debs, gateway) as port:
            monkeypatch.setenv("NGC_CACHE_PORT", str(port))
            yield functools.partial(_build, client, network.name, gateway, built)
    finally:
        for image in built:
            with contextlib.suppress(docker.errors.APIError):
                client.api.remove_image(image, force=True)
        network.remove()


def _build(client: Any, network: str, gateway: str, built: list[str], runs: list[str]) -> str:
    dockerfile = "\n".join([f"FROM {OS_REF}", *(f"RUN {run}" for run in runs)])
    chunks = client.api.build(fileobj=io.BytesIO(dockerfile.encode()), rm=True, forcerm=True,
                              decode=True, network_mode=network,
                              extra_hosts={"ngc-cache": gateway})
    log: list[str] = []
    try:
        image = consume_build(chunks, log.append)
    except StreamError as exc:  # apt's reason is in the step's output, not in the error
        raise StreamError("\n".join([*log, str(exc)])) from None
    built.append(image)
    return image


def cache_install(debs: Path, packages: list[AptPackage], requested: list[str]) -> str:
    """The RUN text that installs `requested` from a repository of `packages` in `debs`."""
    repo = repo_path(packages)
    index = packages_index([(p, deb_stanza(debs / cache_file(p))) for p in packages])
    (debs / repo).mkdir(parents=True, exist_ok=True)
    (debs / repo / "Packages").write_text(index, encoding="utf-8")
    return install_command(repo, packages, requested)


@contextlib.contextmanager
def serving(root: Path, host: str) -> Iterator[int]:
    """A plain HTTP server of `root` on `host` (a free port), as the package cache is."""
    handler = functools.partial(QuietFiles, directory=str(root))
    httpd = ThreadingHTTPServer((host, 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass


def _run(client: Any, image: str, script: str) -> str:
    out: bytes = client.containers.run(image, ["sh", "-c", script], remove=True,
                                       network_disabled=True)
    return out.decode()
