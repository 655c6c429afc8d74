"""The spine end to end on the real engine and registry: build, validate, push, pull back."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import docker
import pytest

from ngc_builder.lock.models import dump_lock, load_lock, lock_path
from ngc_builder.publish.attest import attestation_tag
from ngc_builder.publish.referrers import referrers_tag
from ngc_builder.publish.sbom import check_sbom, sbom_tag
from ngc_builder.publish.signing import signature_tag
from ngc_builder.publish.squashfs_artifact import squashfs_tag
from ngc_builder.services.registry import parse_registry
from tests.integration.conftest import ReleaseRun, cli, held_locally

pytestmark = pytest.mark.integration
TAG = "26.11-py3"
PUSHED = ("base", "cuda-mini", "jax")


def test_broken_image_fails_and_the_release_exits_1(ci_release: ReleaseRun) -> None:
    assert ci_release.code == 1, ci_release.stderr[-2000:]
    broken = ci_release.record["images"]["broken"]
    assert broken["build"]["status"] == "failed"
    assert "broken on purpose" in broken["build"]["error"]
    assert broken["validation"]["status"] == "blocked"
    assert broken["push"]["status"] == "blocked"
    assert "broken: build:" in ci_release.stderr


def test_siblings_pass_and_are_pushed(ci_release: ReleaseRun) -> None:
    for name in PUSHED:
        image = ci_release.record["images"][name]
        assert image["build"]["status"] == "ok"
        assert image["validation"]["verdict"] == "pass", image["validation"]
        assert image["push"]["status"] == "ok"
        assert image["push"]["ref"] == f"{ci_release.registry}/{name}:{TAG}-rc1"
        assert image["push"]["promoted"] == [TAG, f"key-{image['build']['key']}"]
        assert image["push"]["digest"].startswith("sha256:")
        assert image["build"]["size_bytes"] > 50_000_000


def test_registry_api_holds_exactly_the_passed_images(ci_release: ReleaseRun) -> None:
    for name in PUSHED:
        image = ci_release.record["images"][name]
        key_tag = f"key-{image['build']['key']}"
        tags = parse_registry(ci_release.registry).list_tags(name)
        digest = image["push"]["digest"]
        # ...and the image's SBOM beside it, pushed before the release tag moved
        # ...and the cosign signatures of both (tests/integration/test_signing.py checks them)
        sbom = parse_registry(ci_release.registry).manifest_digest(name, sbom_tag(digest))
        assert sbom is not None
        # ...and jax's SquashFS, signed too (its row asks for one: test_squashfs.py)
        registry = parse_registry(ci_release.registry)
        squashfs = [squashfs_tag(digest), signature_tag(
            registry.manifest_digest(name, squashfs_tag(digest)) or "")] if name == "jax" else []
        assert sorted(tags) == sorted([TAG, f"{TAG}-rc1", key_tag, sbom_tag(digest),
                                       signature_tag(digest), signature_tag(sbom),
                                       attestation_tag(digest), referrers_tag(digest),
                                       *squashfs])
        assert image["push"]["sbom"] == sbom_tag(digest)
        assert check_sbom(parse_registry(ci_release.registry), name, digest) is None
        for tag in (TAG, f"{TAG}-rc1", key_tag):  # one manifest, three names
            assert parse_registry(ci_release.registry).manifest_digest(name, tag) == digest
    assert parse_registry(ci_release.registry).list_tags("broken") == []
    assert parse_registry(ci_release.registry).manifest_digest("broken", TAG) is None


def test_the_framework_own_wheels_are_a_layer_of_their_own(
    ci_release: ReleaseRun, docker_client: Any
) -> None:
    """jax and jaxlib (the framework's own release) in one layer, numpy and scipy in the
    layer of the whole lock after it: two big layers, which the engine gzips side by side."""
    image_id = ci_release.record["images"]["jax"]["build"]["image_id"]
    steps = {(entry["CreatedBy"] or ""): entry["Size"]
             for entry in docker_client.api.history(image_id)}
    family = next(size for step, size in steps.items() if "'jaxlib==0.12.0" in step)
    rest = next(size for step, size in steps.items()
                if "-r /opt/ngc/frameworks/jax/requirements.lock" in step)
    assert family > 50_000_000 and rest > 20_000_000, steps  # jaxlib; scipy and numpy


def test_record_is_on_disk(ci_release: ReleaseRun) -> None:
    saved = json.loads((ci_release.build_dir / "26.11" / "release.json").read_text())
    assert saved["images"]["jax"]["push"]["digest"] == (
        ci_release.record["images"]["jax"]["push"]["digest"])
    assert (ci_release.build_dir / "26.11" / "logs" / "jax.log").stat().st_size > 0


def test_pulled_back_image_carries_labels_and_digest(
    ci_release: ReleaseRun, docker_client: Any
) -> None:
    ref = f"{ci_release.registry}/jax:{TAG}"  # set through the registry API, never pushed
    pulled = subprocess.run(["docker", "pull", ref], capture_output=True, text=True, check=False)
    assert pulled.returncode == 0, pulled.stderr
    info = docker_client.api.inspect_image(ref)
    digest = ci_release.record["images"]["jax"]["push"]["digest"]
    assert f"{ci_release.registry}/jax@{digest}" in info["RepoDigests"]
    labels = info["Config"]["Labels"]
    assert labels["org.ngc-builder.framework"] == "jax"
    assert labels["org.ngc-builder.framework.version"] == "0.12.0"
    assert labels["org.ngc-builder.cudart"] == "13.2.86"
    assert labels["org.ngc-builder.python"] == "3.13"
    assert labels["org.opencontainers.image.version"] == TAG
    for key in ("created", "revision", "source", "title"):
        assert labels[f"org.opencontainers.image.{key}"]


def test_pulled_image_runs_its_framework(ci_release: ReleaseRun) -> None:
    ref = f"{ci_release.registry}/jax:{TAG}"
    done = subprocess.run(["docker", "run", "--rm", ref, "python", "-c",
                           "import jax; print(jax.__version__)"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0.12.0"


def test_validation_evidence_json_and_junit(ci_release: ReleaseRun) -> None:
    validation = ci_release.record["images"]["jax"]["validation"]
    report = json.loads(Path(validation["report"]).read_text())
    checks = {c["id"]: c for c in report["checks"]}
    for passed in ("labels", "framework.version", "lib.cudart", "pip.check",
                   "stack.wheels", "jax.train_cpu"):
        assert checks[passed]["status"] == "pass", checks[passed]
    gpu_checks = [c for c in report["checks"] if c["id"].startswith("jax.gpu.")]
    assert len(gpu_checks) == 5
    assert all(c["status"] == "skip" and c["message"] == "no GPU" for c in gpu_checks)
    summary = Path(validation["report"]).with_name("jax.summary.md").read_text()
    assert "- verdict: **pass**" in summary and "| T2 | `jax.train_cpu` | pass |" in summary
    suite = ET.parse(validation["junit"]).getroot().find("testsuite")
    assert suite is not None
    assert int(suite.get("tests", "0")) == len(report["checks"])
    assert int(suite.get("skipped", "0")) >= 3 and int(suite.get("failures", "1")) == 0


def test_rerun_reuses_builds_and_pushes(ci_release: ReleaseRun) -> None:
    done = cli("release", str(ci_release.manifest), "--registry", ci_release.registry,
               "--build-dir", str(ci_release.build_dir), "--only", "jax", "--json", "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    jax = json.loads(done.stdout)["images"]["jax"]
    assert jax["build"]["reused"] and jax["validation"]["reused"] and jax["push"]["reused"]
    assert jax["push"]["digest"] == ci_release.record["images"]["jax"]["push"]["digest"]
    # It found the image on the engine (reused): it leaves it there, as it found it.
    assert held_locally(docker.from_env(), jax["build"]["image_id"])


def test_registry_down_makes_the_push_fail_loudly(ci_release: ReleaseRun, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The default retries' backoff is the faults suite's subject; here one attempt is enough.
    monkeypatch.setenv("NGC_RETRIES", "1")
    done = cli("release", str(ci_release.manifest), "--registry", "127.0.0.1:5999/down",
               "--build-dir", str(tmp_path / "build"), "--only", "base", "--json", "--quiet")
    assert done.returncode == 1
    base = json.loads(done.stdout)["images"]["base"]
    assert base["validation"]["verdict"] == "pass"
    assert base["push"]["status"] == "failed"
    assert "127.0.0.1:5999" in base["push"]["error"]
    assert "base: push:" in done.stderr


def test_the_next_release_tags_the_same_base_and_cuda_digests(ci_release: ReleaseRun) -> None:
    """A month later nothing below the frameworks moved: `plan` says the shared layers are
    only promoted, and the release tags their published digests instead of rebuilding them.
    (Only the stack is released here: jax's new build and push add a minute and nothing to
    what is shown; `plan` shows it gets a new key.)"""
    manifest = ci_release.manifest.with_name("ci-next.yaml")
    manifest.write_text(ci_release.manifest.read_text().replace('release: "26.11"',
                                                                'release: "26.12"'))
    lock = load_lock(lock_path(ci_release.manifest))
    assert lock is not None
    lock_path(manifest).write_text(dump_lock(lock.model_copy(update={"release": "26.12"})))
    common = ("--registry", ci_release.registry, "--build-dir", str(ci_release.build_dir))
    planned = cli("plan", str(manifest), *common, "--json")
    assert planned.returncode == 0, planned.stderr[-2000:]
    decisions = {d["image"]: d for d in json.loads(planned.stdout)["images"]}
    for shared in ("base", "cuda-mini"):
        assert (decisions[shared]["build"], decisions[shared]["push"]) == ("skip", "promote")
    # jax names its release: a new key, built (or reused from an earlier run on this engine).
    assert decisions["jax"]["build"] in ("build", "reuse")
    assert decisions["jax"]["key"] != ci_release.record["images"]["jax"]["build"]["key"]
    done = cli("release", str(manifest), *common, "--only", "cuda-mini", "--json", "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    images, before = json.loads(done.stdout)["images"], ci_release.record["images"]
    registry = parse_registry(ci_release.registry)
    for shared in ("base", "cuda-mini"):
        digest = before[shared]["push"]["digest"]
        assert images[shared]["push"]["digest"] == digest and images[shared]["build"]["reused"]
        assert registry.manifest_digest(shared, "26.12-py3") == digest
        assert registry.manifest_digest(shared, TAG) == digest
    assert "jax" not in images and registry.manifest_digest("jax", "26.12-py3") is None
