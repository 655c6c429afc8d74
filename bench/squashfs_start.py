"""A node's first and later start of one image, side by side in one run: Charliecloud as sites
use it today (`ch-image pull` from the registry, which downloads and unpacks every layer, then
`ch-run` of the unpacked tree) against `ngc-builder squashfs` (the image's signed SquashFS
fetched, its digest and signatures checked, `ch-run` straight from the file), then the warm
start from its cache. Each start runs `python -c 'import torch'` (the image's framework).

Both sides read from one fresh registry of their own (TLS: `ch-image` speaks nothing else), to
which the image is pushed through the registry API and its SquashFS made and pushed as a
release does. Each cold start begins with the page cache dropped and nothing of the image on
the node. Prints times, sizes and ratios; writes JSON (build/bench/squashfs_start.json).

Usage (as root, after a release left a pytorch image on the engine):
    .venv/bin/python bench/squashfs_start.py [IMAGE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402

from bench.release_vs_naive import disk_bytes  # noqa: E402
from ngc_builder.publish.cosign_keys import SigningKey  # noqa: E402
from ngc_builder.publish.layer_memo import LayerMemo  # noqa: E402
from ngc_builder.publish.signing import sign_image  # noqa: E402
from ngc_builder.publish.squashfs import make_squashfs  # noqa: E402
from ngc_builder.publish.squashfs_artifact import find_squashfs, push_squashfs  # noqa: E402
from ngc_builder.publish.upload import upload_image  # noqa: E402
from ngc_builder.services.engine import connect  # noqa: E402
from ngc_builder.services.registry import parse_registry  # noqa: E402
from tests.integration.registries import free_port  # noqa: E402

NAME, TAG = "pytorch", "26.12-py3"
FIRST_LINE = ["python", "-c", "import torch; print(torch.__version__)"]
EPOCH = 1764547200  # any fixed time: the SquashFS's files are dated by it
CERTS_D = Path("/etc/docker/certs.d")


def newest_pytorch() -> str:
    listed = subprocess.run(["docker", "images", "--format", "{{.ID}} {{.Repository}}",
                             "--filter", "reference=ngc-local/pytorch"], capture_output=True,
                            text=True, check=True).stdout.split("\n")
    for line in filter(None, listed):
        image = line.split()[0]
        arch = subprocess.run(["docker", "image", "inspect", "-f", "{{.Architecture}}", image],
                              capture_output=True, text=True, check=True).stdout.strip()
        if arch == "amd64":
            return image
    sys.exit("bench: no amd64 ngc-local/pytorch image here: `make release` first, or name one")


def full_id(image: str) -> str:
    """The engine's whole ID (`sha256:...`): the upload names the config by it."""
    return subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", image],
                          capture_output=True, text=True, check=True).stdout.strip()


@contextlib.contextmanager
def tls_registry(folder: Path) -> Iterator[str]:
    """docker-registry behind a self-signed certificate, trusted the Docker way (certs.d)."""
    port = free_port()
    host = f"127.0.0.1:{port}"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(folder / "key.pem"),
                    "-out", str(folder / "cert.pem")], check=True, capture_output=True)
    config = folder / "registry.yml"
    config.write_text(json.dumps({
        "version": 0.1, "log": {"level": "error"},
        "storage": {"filesystem": {"rootdirectory": str(folder / "data")}},
        "http": {"addr": host, "tls": {"certificate": str(folder / "cert.pem"),
                                       "key": str(folder / "key.pem")}}}))
    (CERTS_D / host).mkdir(parents=True, exist_ok=True)
    shutil.copy(folder / "cert.pem", CERTS_D / host / "ca.crt")
    server = subprocess.Popen(["docker-registry", "serve", str(config)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.2)
        yield host
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(CERTS_D / host, ignore_errors=True)


def drop_caches() -> None:
    """Nothing of the image in memory: what a node that never ran it has."""
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False,
                          env={**os.environ, "USER": "root", **(env or {})})
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"bench: {' '.join(argv[:4])}... exited {done.returncode}: "
                 f"{done.stderr.strip()[-600:]}")
    return elapsed, done.stdout.strip()


def publish(image: str, host: str, scratch: Path, key: SigningKey) -> dict[str, Any]:
    """The image and its SquashFS in the registry, both signed, as a release leaves them."""
    registry = parse_registry(host)
    started = time.monotonic()
    digest = upload_image(connect().api, registry, NAME, image, TAG, [],
                          LayerMemo(scratch / "memo.json"), lambda line: None)
    pushed = time.monotonic() - started
    work = scratch / "squash"
    work.mkdir()
    squash = make_squashfs(connect(), image, scratch / "image.sqfs", EPOCH, work)
    artifact = push_squashfs(registry, NAME, digest, squash)
    for signed in (digest, artifact):
        sign_image(registry, NAME, signed, key)
    (scratch / "image.sqfs").unlink()
    manifest = json.loads(registry.get_manifest(NAME, digest).body)  # type: ignore[union-attr]
    found = find_squashfs(registry, NAME, digest)
    assert not isinstance(found, str), found
    return {"digest": digest, "push_s": pushed, "squashfs_make_s": squash.seconds,
            "registry_image_bytes": sum(layer["size"] for layer in manifest["layers"]),
            "squashfs_bytes": squash.size}


def today(host: str, scratch: Path) -> dict[str, Any]:
    """ch-image pull (download and unpack every layer), then the first line from the tree."""
    storage = scratch / "ch-image"
    env = {"CH_IMAGE_STORAGE": str(storage), "REQUESTS_CA_BUNDLE": str(scratch / "cert.pem")}
    drop_caches()
    pull_s, _ = timed(["/usr/bin/python3", "/usr/bin/ch-image", "pull", f"{host}/{NAME}:{TAG}"],
                      env)
    [tree] = (storage / "img").iterdir()
    run_s, version = timed(["ch-run", "--set-env", "--cd=/workspace", str(tree), "--",
                            *FIRST_LINE])
    warm_s, _ = timed(["ch-run", "--set-env", "--cd=/workspace", str(tree), "--",
                       *FIRST_LINE])
    unpacked = disk_bytes(tree)
    shutil.rmtree(storage)
    return {"pull_unpack_s": pull_s, "first_import_s": run_s, "cold_s": pull_s + run_s,
            "warm_s": warm_s, "unpacked_bytes": unpacked, "torch": version}


def from_squashfs(host: str, scratch: Path) -> dict[str, Any]:
    """`ngc-builder squashfs`: cold (empty cache), warm, and warm with the page cache dropped."""
    command = [str(REPO / ".venv" / "bin" / "ngc-builder"), "squashfs", f"{host}/{NAME}:{TAG}",
               "--key", str(scratch / "cosign.pub"), "--cache-dir", str(scratch / "cache"),
               "--", *FIRST_LINE]
    drop_caches()
    cold_s, version = timed(command)
    warm_s, _ = timed(command)
    drop_caches()
    warm_dropped_s, _ = timed(command)
    # Where a warm start goes: the registry's answers and the two signatures checked (the
    # command without CMD), and ch-run from the cached file alone.
    checks_s, path = timed(command[:command.index("--")])
    ch_run_s, _ = timed(["ch-run", "--set-env", "--env-no-expand", "--cd=/workspace", path,
                         "--", *FIRST_LINE])
    return {"cold_s": cold_s, "warm_s": warm_s, "warm_page_cache_dropped_s": warm_dropped_s,
            "warm_checks_only_s": checks_s, "warm_ch_run_only_s": ch_run_s, "torch": version}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("image", nargs="?", help="an amd64 pytorch image on the engine")
    image = full_id(parser.parse_args().image or newest_pytorch())
    out = REPO / "build" / "bench" / "squashfs_start.json"
    key = SigningKey(ec.generate_private_key(ec.SECP256R1()), "bench")
    with tempfile.TemporaryDirectory(prefix="bench-squashfs-", dir="/var/tmp") as folder:
        scratch = Path(folder)
        (scratch / "cosign.pub").write_text(key.public_pem)
        with tls_registry(scratch) as host:
            published = publish(image, host, scratch, key)
            print(json.dumps(published, indent=2), flush=True)
            before = today(host, scratch)
            after = from_squashfs(host, scratch)
    result = {"image": image, **published, "today": before, "squashfs": after,
              "cold_ratio": after["cold_s"] / before["cold_s"],
              "size_ratio": published["squashfs_bytes"] / before["unpacked_bytes"]}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"cold start: pull+unpack+import {before['cold_s']:.1f} s, SquashFS fetch+verify+"
          f"import {after['cold_s']:.1f} s: {result['cold_ratio']:.2f} x (target <= 0.33)")
    print(f"warm start from the cache: {after['warm_s']:.1f} s (page cache dropped: "
          f"{after['warm_page_cache_dropped_s']:.1f} s; target <= 10 s)")


if __name__ == "__main__":
    main()
