"""A two-platform release through `release`, as a release engineer runs it: the CI release's
base and stack under the small `purepy` framework, each image built for linux/amd64 and
linux/arm64 on this amd64 host, the arm64 one validated under emulation, both pushed, and the
candidate, key and release tags each one index over both. Plain `docker` and the CLI's own
registry client read the index; each platform's manifest is signed and has its own SBOM; a
second run finds everything published and builds nothing. CPU JAX through the same path (its
emulated tier: 2 min of QEMU) is in `make test-extended`."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path
from typing import Any

import docker
import pytest

from ngc_builder.publish.cosign_keys import PUBLIC_FILE
from ngc_builder.publish.oci_index import platforms_of
from ngc_builder.publish.sbom import sbom_tag
from ngc_builder.publish.signing import signature_tag
from ngc_builder.publish.squashfs_artifact import Found, find_squashfs, squashfs_tag
from ngc_builder.services.environment import state_dir
from ngc_builder.services.registry import HttpRegistry, parse_registry
from tests.conftest import DATA
from tests.integration.conftest import (
    REGISTRY_HOST,
    ReleaseRun,
    ci_project,
    cli,
    held_locally,
    pull_back,
)
from tests.integration.test_arm64_build import _project
from tests.integration.test_signing import cosign_verify

pytestmark = pytest.mark.integration

ARM = "linux/arm64"
LEAF = "purepy"
IMAGES = ("base", "cuda-mini", LEAF)


def _release(root: Path, manifest: Path, registry: str, *extra: str,
             build: str = "build") -> ReleaseRun:
    done = cli("release", str(manifest), "--registry", registry, "--build-dir",
               str(root / build), "--os-source", "bootstrap", "--json", "--quiet", *extra)
    return ReleaseRun(root, manifest, root / build, registry, done.returncode, done.stdout,
                      done.stderr)


def _released(root: Path, manifest: Path, leaf: str) -> ReleaseRun:
    run = _release(root, manifest, f"{REGISTRY_HOST}/arm-{secrets.token_hex(4)}")
    assert run.code == 0, run.stderr[-3000:]
    # The leaf left the engine once published (both platforms) where this run built it, and
    # stayed where the run found it there already (an earlier session's, same key); the
    # parents stayed either way.
    client, image = docker.from_env(), run.record["images"][leaf]
    for build in (image["build"], image["platforms"][ARM]["build"]):
        assert held_locally(client, build["image_id"]) == build["reused"], build
    assert held_locally(client, run.record["images"]["cuda-mini"]["platforms"][ARM]["build"][
        "image_id"])
    return pull_back(run)


@pytest.fixture(scope="module")
def released(locked_trixie_os: str, tmp_path_factory: pytest.TempPathFactory) -> ReleaseRun:
    root = tmp_path_factory.mktemp("arm64-release")
    return _released(root, _small_project(root, LEAF, "ci-arm64-stage"), LEAF)


def _report(step: dict[str, Any]) -> dict[str, Any]:
    """The validation report a record's image (or platform entry) names."""
    report: dict[str, Any] = json.loads(Path(step["validation"]["report"]).read_text())
    return report


def _messages(report: dict[str, Any], status: str) -> dict[str, str]:
    return {check["id"]: check["message"] for check in report["checks"]
            if check["status"] == status}


def test_every_image_ships_arm64_built_here_and_validated_emulated(
        released: ReleaseRun, docker_client: Any) -> None:
    images = released.record["images"]
    for name in IMAGES:
        arm = images[name]["platforms"][ARM]
        assert (arm["build"]["status"], arm["validation"]["verdict"], arm["left_out"]) == \
            ("ok", "pass", None), name
        assert docker_client.api.inspect_image(arm["build"]["image_id"])["Architecture"] \
            == "arm64"
    arm = images[LEAF]["platforms"][ARM]
    report = _report(arm)
    assert report["environment"]["platform"] == ARM
    assert report["environment"]["emulated"].startswith("QEMU user-mode")
    # The emulated tier: the static checks and the one operation the probe marks for it run
    # the platform's code; the rest waits for a native node, and says so.
    assert report["environment"]["scope"] == "emulated" == arm["validation"]["scope"]
    passed = _messages(report, "pass")
    assert {"framework.import", "pip.check", "stack.wheels", "purepy.works"} <= set(passed)
    assert passed["purepy.works"].endswith("works on aarch64")
    skipped = _messages(report, "skip")
    assert skipped["gpu.driver"] == "no GPU"
    assert skipped["purepy.sums"].startswith("not in the emulated tier")
    host = _report(images[LEAF])
    assert host["environment"]["scope"] == "full"
    assert {"purepy.works", "purepy.sums"} <= set(_messages(host, "pass"))


@pytest.mark.extended  # the same path with a compiled framework: 2 min of QEMU (docs/testing.md)
def test_cpu_jax_runs_its_emulated_tier_on_arm64(
        locked_trixie_os: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("arm64-jax")
    jax = _released(root, _project(root), "jax").record["images"]["jax"]
    arm = jax["platforms"][ARM]
    report = _report(arm)
    assert report["environment"]["scope"] == "emulated" == arm["validation"]["scope"]
    assert {"jax.bf16_matmul", "framework.import", "pip.check", "framework.libraries",
            "stack.wheels"} <= set(_messages(report, "pass"))
    skipped = _messages(report, "skip")
    for numerics in ("jax.train_cpu", "jax.precision_cpu", "jax.dist.multiprocess_cpu"):
        assert skipped[numerics].startswith("not in the emulated tier"), numerics
    host = _report(jax)
    assert host["environment"]["scope"] == "full"
    assert {"jax.train_cpu", "jax.precision_cpu"} <= set(_messages(host, "pass"))


def test_release_and_key_tags_are_one_index_over_both_platforms(released: ReleaseRun) -> None:
    registry = parse_registry(released.registry)
    for name in IMAGES:
        record = released.record["images"][name]
        digest = record["push"]["digest"]
        held = platforms_of(registry, name, digest)
        assert held == {"linux/amd64": record["push"]["host_digest"],
                        ARM: record["platforms"][ARM]["digest"]}, name
        for tag in record["push"]["promoted"]:
            assert registry.manifest_digest(name, tag) == digest, f"{name}:{tag}"


def _sbom_arches(registry: HttpRegistry, digest: str) -> set[str]:
    """The Debian architectures the SBOM beside `digest` lists (its one layer, read raw)."""
    artifact = registry.get_manifest(LEAF, sbom_tag(digest))
    assert artifact is not None, digest
    [layer] = json.loads(artifact.body)["layers"]
    document = json.loads(registry.get_blob(LEAF, layer["digest"]))
    return {component["purl"].rpartition("?arch=")[2] for component in document["components"]
            if component["purl"].startswith("pkg:deb/") and "?arch=" in component["purl"]}


def test_cosign_verifies_the_index_and_each_platform_each_with_its_own_sbom(
        released: ReleaseRun) -> None:
    registry = parse_registry(released.registry)
    public = state_dir() / "signing" / PUBLIC_FILE  # the builder's own key: none configured
    record = released.record["images"][LEAF]
    arm64 = record["platforms"][ARM]["digest"]
    for digest in (record["push"]["digest"], record["push"]["host_digest"], arm64):
        done = cosign_verify(f"{released.registry}/{LEAF}@{digest}", public)
        assert done.returncode == 0, done.stderr
        [claim] = json.loads(done.stdout)
        assert claim["critical"]["image"]["docker-manifest-digest"] == digest
    # Each platform's SBOM is made from its own lock: arm64 .debs in arm64's, none in amd64's.
    assert _sbom_arches(registry, arm64) == {"arm64", "all"}
    assert _sbom_arches(registry, record["push"]["host_digest"]) == {"amd64", "all"}


def test_each_platform_has_its_own_squashfs_made_from_its_own_image(
        released: ReleaseRun, tmp_path: Path) -> None:
    """purepy's row asks for a SquashFS: one per platform, each about its own manifest, the
    arm64 one holding arm64 machine code (made from the arm64 image on this amd64 host)."""
    registry = parse_registry(released.registry)
    record = released.record["images"][LEAF]
    made = {entry["platform"]: entry for entry in record["push"]["squashfs"]}
    wanted = {"linux/amd64": (record["push"]["host_digest"], 62),  # ELF e_machine: x86-64
              ARM: (record["platforms"][ARM]["digest"], 183)}  # AArch64
    assert set(made) == set(wanted)
    for platform, (digest, machine) in wanted.items():
        assert (made[platform]["image"], made[platform]["tag"]) == (digest, squashfs_tag(digest))
        found = find_squashfs(registry, LEAF, digest)
        assert isinstance(found, Found), found
        file = tmp_path / f"{platform.replace('/', '-')}.sqfs"
        registry.download_blob(LEAF, found.layer_digest, found.size, file)
        ls = subprocess.run(["unsquashfs", "-cat", str(file), "usr/bin/ls"],
                            capture_output=True, check=True).stdout
        assert ls[:4] == b"\x7fELF" and int.from_bytes(ls[18:20], "little") == machine


def _docker(*command: str) -> str:
    return subprocess.run(["docker", *command], capture_output=True, text=True,
                          check=True).stdout


def test_plain_docker_pulls_each_platform_of_the_release_tag(released: ReleaseRun) -> None:
    ref = f"{released.registry}/{LEAF}:26.11-py3"
    listed = json.loads(_docker("manifest", "inspect", "--insecure", ref))
    assert sorted(entry["platform"]["architecture"] for entry in listed["manifests"]) == \
        ["amd64", "arm64"]
    _docker("pull", "-q", "--platform", ARM, ref)
    machine = _docker("run", "--rm", "--platform", ARM, "--entrypoint", "uname", ref, "-m")
    assert machine.strip() == "aarch64"
    _docker("pull", "-q", ref)  # this host's platform again, for whoever uses the tag next
    assert _docker("run", "--rm", "--entrypoint", "uname", ref, "-m").strip() == "x86_64"


def test_a_second_run_finds_both_platforms_published_and_builds_nothing(
        released: ReleaseRun) -> None:
    again = _release(released.root, released.manifest, released.registry)
    assert again.code == 0, again.stderr[-3000:]
    for name in IMAGES:
        record = again.record["images"][name]
        assert record["push"]["reused"], name
        assert record["push"]["digest"] == released.record["images"][name]["push"]["digest"]
        assert record["platforms"][ARM]["digest"] == \
            released.record["images"][name]["platforms"][ARM]["digest"]


def _small_project(root: Path, framework: str, release: str) -> Path:
    """The two-platform CI release's base and stack under rows of one of the test frameworks
    (data/frameworks/): amd64only's probe fails on aarch64, purepy's works everywhere."""
    ci_project(root)
    (root / "frameworks" / framework).symlink_to(DATA / "frameworks" / framework)
    for name in (f"{release}.yaml", f"{release}.lock.json"):
        (root / "releases" / name).write_text((DATA / "releases" / name).read_text())
    return root / "releases" / f"{release}.yaml"


@pytest.fixture(scope="module")
def arm64_fails(locked_trixie_os: str, tmp_path_factory: pytest.TempPathFactory) -> ReleaseRun:
    root = tmp_path_factory.mktemp("arm64-fails")
    return _release(root, _small_project(root, "amd64only", "ci-arm64-fail"),
                    f"{REGISTRY_HOST}/armfail-{secrets.token_hex(4)}")


@pytest.mark.extended  # a second two-platform path; CI keeps `released` (docs/testing.md)
def test_a_failed_arm64_validation_keeps_the_whole_image_out(arm64_fails: ReleaseRun) -> None:
    assert arm64_fails.code == 1, arm64_fails.stderr[-3000:]
    record = arm64_fails.record["images"]["amd64only"]
    arm = record["platforms"][ARM]
    assert (record["build"]["status"], record["validation"]["verdict"]) == ("ok", "pass")
    assert (arm["build"]["status"], arm["validation"]["verdict"], arm["left_out"]) == \
        ("ok", "fail", None)
    report = json.loads(Path(arm["validation"]["report"]).read_text())
    [check] = [c for c in report["checks"] if c["id"] == "amd64only.machine"]
    assert (check["status"], report["environment"]["platform"]) == ("fail", ARM)
    assert record["push"]["status"] == "blocked"
    assert record["push"]["error"].startswith(f"{ARM} did not pass: validate {ARM}")
    assert "amd64only: validate linux/arm64" in arm64_fails.stderr
    registry = parse_registry(arm64_fails.registry)
    assert registry.list_tags("amd64only") == []  # not even its amd64 image, which passed
    local = _docker("images", "--format", "{{.Repository}}:{{.Tag}}").split()
    assert not [ref for ref in local if ref.startswith(f"{arm64_fails.registry}/amd64only:")]


@pytest.mark.extended  # a second two-platform path; CI keeps `released` (docs/testing.md)
def test_an_optional_platform_that_fails_is_left_out_and_the_release_says_so(
        arm64_fails: ReleaseRun) -> None:
    record = arm64_fails.record["images"]["amd64only-optional"]
    left_out = record["platforms"][ARM]["left_out"]
    assert left_out is not None and left_out.startswith(f"validate {ARM}: failed")
    assert (record["push"]["status"], record["push"]["host_digest"]) == ("ok", None)
    assert f"amd64only-optional: {ARM} left out (optional_platforms)" in arm64_fails.stderr
    registry = parse_registry(arm64_fails.registry)
    for tag in record["push"]["promoted"]:  # a plain amd64 manifest, no index
        assert registry.manifest_digest("amd64only-optional", tag) == record["push"]["digest"]
    ref = f"{arm64_fails.registry}/amd64only-optional:26.11-py3"
    shipped = json.loads(_docker("manifest", "inspect", "--insecure", ref))
    assert "manifests" not in shipped and shipped["config"]["digest"].startswith("sha256:")
    notes = arm64_fails.root / "notes.md"
    done = cli("report", str(arm64_fails.manifest), "--build-dir", str(arm64_fails.build_dir),
               "--out", str(arm64_fails.root / "matrix.md"), "--notes", str(notes),
               "--archive", str(arm64_fails.root / "archive"))
    assert done.returncode == 0, done.stderr
    assert f"- amd64only-optional: {ARM} left out (optional_platforms): validate {ARM}" \
        in notes.read_text()


@pytest.mark.extended  # a second two-platform path; CI keeps `released` (docs/testing.md)
def test_a_staged_candidate_is_promoted_with_the_platform_images_this_run_validated(
        arm64_fails: ReleaseRun, docker_client: Any,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """`--no-promote` stages an index; a gate host with no copy of it pulls each platform's
    image by its entry's digest, validates those, and promotes the index it validated."""
    root = tmp_path_factory.mktemp("arm64-staged")
    manifest = _small_project(root, "purepy", "ci-arm64-stage")
    staged = _release(root, manifest, arm64_fails.registry, "--no-promote")  # base: published
    assert staged.code == 0, staged.stderr[-3000:]
    candidate = staged.record["images"]["purepy"]
    arm = candidate["platforms"][ARM]
    assert candidate["push"]["staged"] and candidate["push"]["promoted"] == []
    for image_id in (candidate["build"]["image_id"], arm["build"]["image_id"]):
        # Staged, the registry holds it: a build of this run left the engine (tidy.py); one
        # it found there is removed here, as the gate host has no copy.
        if held_locally(docker_client, image_id):
            docker_client.images.remove(image_id, force=True)
    gate = _release(root, manifest, arm64_fails.registry, build="gate")
    assert gate.code == 0, gate.stderr[-3000:]
    adopted = gate.record["images"]["purepy"]
    pulled = adopted["platforms"][ARM]
    assert (adopted["build"]["source"], pulled["build"]["source"]) == ("registry", "registry")
    assert pulled["build"]["image_id"] == arm["build"]["image_id"]  # the staged image's config
    assert (pulled["validation"]["verdict"], pulled["validation"]["image_id"]) == \
        ("pass", pulled["build"]["image_id"])
    assert (adopted["push"]["digest"], adopted["push"]["host_digest"], pulled["digest"]) == \
        (candidate["push"]["digest"], candidate["push"]["host_digest"], arm["digest"])
    registry = parse_registry(arm64_fails.registry)
    assert registry.manifest_digest("purepy", "26.11-py3") == candidate["push"]["digest"]
    assert platforms_of(registry, "purepy", "26.11-py3") == {
        "linux/amd64": candidate["push"]["host_digest"], ARM: arm["digest"]}


def _verify(released: ReleaseRun) -> tuple[int, dict[str, str | None], str]:
    done = cli("verify", str(released.manifest), "--registry", released.registry,
               "--build-dir", str(released.build_dir), "--json")
    checks = {f"{c['image']} {c['tag']}": c["problem"] for c in json.loads(done.stdout)}
    return done.returncode, checks, done.stderr


def test_verify_checks_each_platform_and_names_a_swapped_arm64_signature(
        released: ReleaseRun) -> None:
    """Last in this module: it damages what the release pushed."""
    code, checks, _ = _verify(released)
    assert code == 0
    record = released.record["images"][LEAF]
    arm64, amd64 = record["platforms"][ARM]["digest"], record["push"]["host_digest"]
    for key in (f"{LEAF} 26.11-py3 linux/amd64", f"{LEAF} 26.11-py3 linux/arm64",
                f"{LEAF} {signature_tag(arm64)}", f"{LEAF} {sbom_tag(arm64)}"):
        assert key in checks and checks[key] is None, key
    registry = parse_registry(released.registry)
    amd64_signature = registry.get_manifest(LEAF, signature_tag(amd64))
    assert amd64_signature is not None
    registry.put_manifest(LEAF, signature_tag(arm64), amd64_signature)  # a hostile push
    code, checks, stderr = _verify(released)
    assert code == 1
    assert checks[f"{LEAF} {signature_tag(arm64)}"] is not None
    assert f"{LEAF}:{signature_tag(arm64)}" in stderr
