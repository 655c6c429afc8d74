"""The CI release's JAX row asks for a SquashFS (`squashfs: true`): the release made it from the
engine's image, pushed it beside the image as an artifact about its manifest and signed it;
the real cosign verifies that signature, a generic client finds it through the referrers
fallback, and `ngc-builder squashfs` started the image from it with the real `ch-run`,
downloading it once; its `ch-run` line starts the file as an unprivileged user too."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from ngc_builder.commands.squashfs import ch_run_argv
from ngc_builder.publish.cosign_keys import PUBLIC_FILE, SigningKey
from ngc_builder.publish.referrers import OCI_INDEX, referrers_tag
from ngc_builder.publish.squashfs_artifact import SQUASHFS_TYPE, Found, find_squashfs, squashfs_tag
from ngc_builder.services.environment import state_dir
from ngc_builder.services.registry import parse_registry
from tests.integration.conftest import ReleaseRun, cli
from tests.integration.test_signing import cosign_verify

pytestmark = pytest.mark.integration
TAG = "26.11-py3"


@pytest.fixture
def node_user() -> Iterator[tuple[pwd.struct_passwd, Path]]:
    """`nobody` and a folder of its own, for ch-run started unprivileged."""
    if os.geteuid() != 0:
        pytest.skip("starts ch-run as nobody: needs root")
    if os.stat("/dev/fuse").st_mode & 0o006 != 0o006:
        pytest.fail("/dev/fuse is root's alone: `make runtime` (ci/setup-runtime.sh)")
    nobody = pwd.getpwnam("nobody")
    folder = Path(tempfile.mkdtemp(prefix="ngc-node-", dir="/var/tmp"))
    os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    try:
        yield nobody, folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def start(ref: str, key: Path, cache: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return cli("squashfs", ref, "--key", str(key), "--cache-dir", str(cache), "--", *command)


def test_the_release_publishes_a_signed_squashfs_a_node_starts_from(
        ci_release: ReleaseRun, node_user: tuple[pwd.struct_passwd, Path],
        tmp_path: Path) -> None:
    nobody, home = node_user
    image = ci_release.record["images"]["jax"]
    digest = image["push"]["digest"]
    [made] = image["push"]["squashfs"]  # jax ships one platform: one SquashFS
    assert (made["platform"], made["image"], made["tag"]) == (
        "linux/amd64", digest, squashfs_tag(digest))
    assert made["seconds"] > 0  # made by this run, which a later step found again
    registry = parse_registry(ci_release.registry)
    found = find_squashfs(registry, "jax", digest)
    assert isinstance(found, Found) and found.size == made["size"] > 10_000_000
    # the signature of the artifact, as cosign checks it
    public = state_dir() / "signing" / PUBLIC_FILE
    verified = cosign_verify(f"{ci_release.registry}/jax@{found.manifest_digest}", public)
    assert verified.returncode == 0, verified.stderr
    # ...and the artifact as a generic OCI client finds it: the referrers fallback tag
    host, _, path = ci_release.registry.partition("/")
    index = requests.get(f"http://{host}/v2/{path}/jax/manifests/{referrers_tag(digest)}",
                         headers={"Accept": OCI_INDEX}, timeout=30).json()
    [listed] = [entry for entry in index["manifests"] if entry["artifactType"] == SQUASHFS_TYPE]
    assert listed["digest"] == found.manifest_digest
    # a node: cold (downloaded, checked), then warm (the cached file, not fetched again)
    ref, cache = f"{ci_release.registry}/jax:{TAG}", tmp_path / "cache"
    line = ["python", "-c", "import os, jax; print(jax.__version__, os.getuid(), os.getcwd())"]
    cold = start(ref, public, cache, *line)
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout.split() == ["0.12.0", "0", "/workspace"]
    [cached] = cache.iterdir()
    assert cached.name == found.layer_digest.removeprefix("sha256:") + ".sqfs"
    assert cached.stat().st_size == found.size
    before = cached.stat().st_ino
    warm = start(ref, public, cache, "python", "-c", "raise SystemExit(3)")
    assert warm.returncode == 3, warm.stderr  # the command's own status
    assert cached.stat().st_ino == before and list(cache.iterdir()) == [cached]
    # the same ch-run line as a researcher: unprivileged, FUSE-mounted from their own copy
    copy = home / cached.name
    shutil.copyfile(cached, copy)
    os.chown(copy, nobody.pw_uid, nobody.pw_gid)
    as_nobody = subprocess.run(
        ch_run_argv(copy, "/workspace", line), user=nobody.pw_uid, group=nobody.pw_gid,
        extra_groups=[], env={"PATH": "/usr/bin:/bin", "HOME": str(home), "USER": "nobody"},
        capture_output=True, text=True, timeout=300, check=False, cwd="/")
    assert as_nobody.returncode == 0, as_nobody.stderr
    assert as_nobody.stdout.split() == ["0.12.0", str(nobody.pw_uid), "/workspace"]


def test_a_node_refuses_a_squashfs_the_key_did_not_sign(ci_release: ReleaseRun,
                                                        tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    stranger = tmp_path / "stranger.pub"
    stranger.write_text(SigningKey(ec.generate_private_key(ec.SECP256R1()), "x").public_pem)
    refused = start(f"{ci_release.registry}/jax:{TAG}", stranger, tmp_path / "cache", "true")
    assert refused.returncode == 1
    assert "is not signed by the key" in refused.stderr and refused.stderr.count("\n") == 1
    assert list((tmp_path / "cache").iterdir()) == []
