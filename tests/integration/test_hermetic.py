"""Hermetic, locked builds on the real engine: nothing of the build host in a published image,
a build on a network with no route out, the cache that serves it, and the lock enforced."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker.errors
import pytest
import requests

from ngc_builder.cache.network import build_network
from ngc_builder.cache.server import ensure_serving
from ngc_builder.cache.simple_index import write_simple_index
from ngc_builder.cache.store import PackageCache
from ngc_builder.errors import StepError
from ngc_builder.lock.models import load_lock, lock_path
from tests.conftest import DATA
from tests.integration.conftest import REGISTRY_HOST, ReleaseRun, cli, make_ci_root

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]
# A private key as PEM writes it (optional headers of an encrypted key, then base64), not the
# marker alone: ssh-keygen and ssh-add (openssh-client, which Open MPI's launcher depends on)
# carry "-----BEGIN ... PRIVATE KEY-----" as format strings. Checked against ed25519, an
# encrypted RSA key and an OpenSSH key, and against those binaries.
PEM_PRIVATE_KEY = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----\r?\n"
                             rb"(?:[A-Za-z-]+:[^\n]*\r?\n)*\r?\n?"
                             rb"[A-Za-z0-9+/=\r\n]{40,}-----END [A-Z0-9 ]*PRIVATE KEY-----")
TAG = "26.11-py3"
PUSHED = ("base", "cuda-mini", "jax")
HOST_BUNDLES = (Path("/etc/ssl/certs/ca-certificates.crt"),  # Debian, Ubuntu
                Path("/etc/pki/tls/certs/ca-bundle.crt"))  # Fedora, RHEL
SUSPECT_ENV = re.compile(r"CERT|CA_BUNDLE|PROXY|INDEX_URL|TRUSTED_HOST|FIND_LINKS")


def layer_files(image_tar: Path) -> Iterator[tuple[str, bytes | None]]:
    """(path, content or None when large) of every file in every layer of a saved image."""
    with tarfile.open(image_tar) as saved:
        for member in saved.getmembers():
            if not member.name.endswith(".tar"):
                continue
            layer = saved.extractfile(member)
            assert layer is not None
            with tarfile.open(fileobj=layer) as files:
                for item in files:
                    if item.isfile():
                        small = item.size <= 1_000_000
                        handle = files.extractfile(item) if small else None
                        yield item.name, handle.read() if handle else None


def saved(docker_client: Any, ref: str, folder: Path) -> Path:
    target = folder / (ref.replace("/", "_").replace(":", "_")[-40:] + ".tar")
    with target.open("wb") as out:
        for chunk in docker_client.api.get_image(ref):
            out.write(chunk)
    return target


def test_published_images_carry_nothing_of_the_build_host(
        ci_release: ReleaseRun, docker_client: Any, tmp_path: Path) -> None:
    host_bundles = {hashlib.sha256(p.read_bytes()).hexdigest() for p in HOST_BUNDLES
                    if p.is_file()}
    # Where the builds reached the cache (the engine may report the bridge's subnet only).
    gateway = build_network(docker_client, offline=False).cache_address
    for name in PUSHED:
        ref = ci_release.record["images"][name]["build"]["image_id"]  # what was pushed
        files = dict(layer_files(saved(docker_client, ref, tmp_path)))
        assert not [path for path in files if path.endswith("ngc-ca-bundle.crt")], name
        small = {path: data for path, data in files.items() if data is not None}
        assert not {hashlib.sha256(d).hexdigest() for d in small.values()} & host_bundles, name
        assert not [path for path, data in small.items() if PEM_PRIVATE_KEY.search(data)], name
        config = docker_client.api.inspect_image(ref)["Config"]
        names = [entry.split("=", 1)[0] for entry in config["Env"]]
        assert not [n for n in names if SUSPECT_ENV.search(n)], (name, names)
        assert not [e for e in config["Env"] if "ngc-cache" in e or gateway in e], name
        steps = json.dumps([(step["CreatedBy"], step["Comment"])
                            for step in docker_client.api.history(ref)])
        assert "ngc-cache:" in steps  # the builds did go through the cache, by that name
        assert gateway not in steps and REGISTRY_HOST not in steps, name
    # The trust store is the distro's own, made in the image, not the host's.
    assert "etc/ssl/certs/ca-certificates.crt" in files


def test_a_hermetic_build_on_a_network_with_no_route_out(
        ci_release: ReleaseRun, docker_client: Any, tmp_path: Path) -> None:
    """After the CI release filled the cache: every layer anew on the internal network, up to
    the CUDA stack (apt and pip from the cache, as a framework's layer installs them)."""
    manifest = make_ci_root(tmp_path / "project")
    done = cli("release", str(manifest), "--offline", "--no-cache", "--no-push", "--only",
               "cuda-mini",
               "--build-dir", str(tmp_path / "build"), "--registry",
               f"{REGISTRY_HOST}/hermetic", "--quiet", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    images = json.loads(done.stdout)["images"]
    assert set(images) >= {"base", "cuda-mini"}
    assert all(images[n]["build"]["status"] == "ok" and not images[n]["build"]["reused"]
               for n in ("base", "cuda-mini"))
    assert "network ngc-offline" in done.stderr
    network = docker_client.api.inspect_network("ngc-offline")
    assert network["Internal"] is True
    # ...and that network really has no way out. A public address would prove nothing on a
    # host without Internet, and the host itself is reachable by design (the cache is served
    # on the network's gateway). A listener in a container on the default bridge is reached
    # only through the host's forwarding: a container on the bridge reaches it, one on
    # `ngc-offline` must not.
    base = ci_release.record["images"]["base"]["build"]["image_id"]
    listener = docker_client.containers.run(
        base, ["python", "-c", "import socket\nserver = socket.create_server(('0.0.0.0', 8000))\n"
               "while True:\n    server.accept()[0].close()"], network="bridge", detach=True,
        remove=True)
    try:
        listener.reload()
        address = listener.attrs["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
        probe = ["python", "-c", "import socket, time\nfor _ in range(50):\n    try:\n"
                 f"        socket.create_connection(({address!r}, 8000), 5).close()\n"
                 "        break\n    except ConnectionRefusedError:\n        time.sleep(0.1)\n"
                 "else:\n    raise SystemExit('refused')"]
        docker_client.containers.run(base, probe, network="bridge", remove=True)
        with pytest.raises(docker.errors.ContainerError):
            docker_client.containers.run(base, probe, network="ngc-offline", remove=True)
    finally:
        listener.remove(force=True)


def test_offline_without_the_cache_fails_clearly_and_builds_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = make_ci_root(tmp_path / "project")
    monkeypatch.setenv("NGC_CACHE_DIR", str(tmp_path / "empty-cache"))
    done = cli("release", str(manifest), "--offline", "--only", "jax", "--build-dir",
               str(tmp_path / "build"), "--registry", f"{REGISTRY_HOST}/nocache")
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "locked files are not in the cache" in errors[0]
    assert "ngc-builder fetch" in errors[0] and "Traceback" not in done.stderr
    assert ": building " not in done.stderr


def test_an_install_that_differs_from_the_lock_fails_the_build(
        ci_release: ReleaseRun, docker_client: Any, tmp_path: Path) -> None:
    lock = load_lock(lock_path(DATA / "releases" / "ci.yaml"))
    assert lock is not None
    six = lock.images["broken"].pip[0]
    (tmp_path / "requirements.lock").write_text(six.requirement() + "\n")
    base = ci_release.record["images"]["base"]["build"]["image_id"]
    docker_client.api.tag(base, "ngc-test/lockcheck-base", "1")
    (tmp_path / "Dockerfile").write_text(
        "FROM ngc-test/lockcheck-base:1\nCOPY requirements.lock /tmp/\n"
        "RUN python -m ngc_runner.lockcheck /tmp/requirements.lock\n")
    stream = docker_client.api.build(path=str(tmp_path), decode=True, rm=True, forcerm=True)
    messages = [chunk.get("stream", "") + chunk.get("error", "") for chunk in stream]
    text = "".join(messages)
    assert f"lock check: six: locked {six.version}, installed nothing" in text
    assert "returned a non-zero code: 1" in text


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def port() -> Iterator[int]:
    chosen = _free_port()
    yield chosen
    subprocess.run(["pkill", "-f", f"ngc_builder.cache.serve .* 127.0.0.1 {chosen} "],
                   check=False)


def test_the_cache_server_serves_its_index_and_refuses_to_be_another(
        tmp_path: Path, port: int) -> None:
    cache = PackageCache(tmp_path / "cache")
    wheel = cache.root / "files" / ("0" * 64) / "six-1.17.0-py2.py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(b"six")
    write_simple_index(cache)
    url = ensure_serving(cache, "127.0.0.1", port)
    assert ensure_serving(cache, "127.0.0.1", port) == url  # found running, not started twice
    page = requests.get(url + "simple/six/", timeout=5)
    assert page.status_code == 200 and "six-1.17.0-py2.py3-none-any.whl" in page.text
    assert requests.get(url + "files/" + "0" * 64 + "/" + wheel.name, timeout=5).content == b"six"
    with pytest.raises(StepError, match="serves another package cache"):
        ensure_serving(PackageCache(tmp_path / "other"), "127.0.0.1", port)


def test_the_key_pattern_finds_a_pem_key_and_not_ssh_keygen_s_format_strings() -> None:
    body = base64.encodebytes(bytes(range(256)) * 2)
    for kind in (b"", b"RSA ", b"OPENSSH "):
        key = b"-----BEGIN " + kind + b"PRIVATE KEY-----\n" + body + b"-----END " + kind + \
            b"PRIVATE KEY-----\n"
        assert PEM_PRIVATE_KEY.search(b"\x00junk" + key), kind
    encrypted = (b"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,"
                 b"00FF\n\n" + body + b"-----END RSA PRIVATE KEY-----\n")
    assert PEM_PRIVATE_KEY.search(encrypted)
    format_strings = (b"-----BEGIN OPENSSH PRIVATE KEY-----\n\x00%s: %s\x00"
                      b"-----END OPENSSH PRIVATE KEY-----\n\x00")
    assert not PEM_PRIVATE_KEY.search(format_strings)
