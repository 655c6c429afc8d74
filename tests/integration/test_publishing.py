"""Monthly releases at speed, on the real engine and registry: a published release re-run does
nothing, a bump rebuilds one image, a failed validation holds the release tag, a registry that
stops mid-release loses nothing and pushes nothing twice, a retired release is rebuilt.

The tests of this module run in order on one small release (base, a one-wheel CUDA stack and
CPU JAX) published to its own registry namespace.
"""

from __future__ import annotations

import json
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.publish.sbom import sbom_tag
from ngc_builder.services.registry import parse_registry
from tests.conftest import DATA, REPO
from tests.integration.conftest import (
    REGISTRY_HOST,
    SUITE_REGISTRY,
    cli,
    copy_lock,
    pull_back_images,
)

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]
TAG = "26.11-py3"
IMAGES = ("base", "cuda-mini", "jax")


@dataclass
class Project:
    root: Path
    manifest: Path
    build_dir: Path
    registry: str

    def release(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return cli("release", str(self.manifest), "--registry", self.registry, "--build-dir",
                   str(self.build_dir), "--os-source", "bootstrap", "--offline", "--json",
                   *extra)

    def record(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.build_dir / "26.11" / "release.json").read_text())
        return data

    def digests(self) -> dict[str, str | None]:
        return {name: parse_registry(self.registry).manifest_digest(name, TAG) for name in IMAGES}


def new_project(root: Path) -> Project:
    """The CI release without its broken row; JAX as a copy, so a test may change its probe."""
    for folder in ("templates", "base-images"):
        (root / folder).symlink_to(REPO / folder)
    shutil.copytree(REPO / "frameworks" / "jax", root / "frameworks" / "jax")
    (root / "releases").mkdir()
    manifest = root / "releases" / "26.11.yaml"
    text = (DATA / "releases" / "ci.yaml").read_text()
    manifest.write_text(text[: text.index("  - framework: broken")])
    copy_lock(manifest, leave_out=("broken",))
    return Project(root, manifest, root / "build", f"{REGISTRY_HOST}/pub-{secrets.token_hex(4)}")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    made = new_project(tmp_path_factory.mktemp("publishing"))
    done = made.release()
    assert done.returncode == 0, done.stderr[-3000:]
    pull_back_images(made.registry, made.record())
    return made


def built_and_pushed(done: subprocess.CompletedProcess[str]) -> tuple[list[str], list[str]]:
    """Images this run built and pushed, from its step lines."""
    built = [line.split(":")[0].split()[-1] for line in done.stderr.splitlines()
             if ": building " in line]
    pushed = [line.split(":")[0].split()[-1] for line in done.stderr.splitlines()
              if ": pushing candidate" in line]
    return built, pushed


def test_a_no_op_rerun_builds_and_pushes_nothing(project: Project) -> None:
    before = project.digests()
    plan = cli("plan", str(project.manifest), "--registry", project.registry, "--build-dir",
               str(project.build_dir), "--json")
    assert {(i["build"], i["push"]) for i in json.loads(plan.stdout)["images"]} == {
        ("skip", "none")}
    started = time.monotonic()
    done = project.release()
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    assert built_and_pushed(done) == ([], [])
    assert project.digests() == before
    assert seconds < 30  # whole CLI start-up included; the bench measures it precisely


def test_a_plain_rerun_is_answered_by_the_memo_until_another_client_moves_a_tag(
    project: Project, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The module's --json release left the memo; a plain re-run answers from it with HEADs
    only. A release tag moved by another client is not hidden: the next run is a whole one,
    refuses to move it back, and forgets the memo; once the tag is restored, a whole run
    passes and the memo is back."""
    def plain() -> subprocess.CompletedProcess[str]:
        return cli("release", str(project.manifest), "--registry", project.registry,
                   "--build-dir", str(project.build_dir), "--os-source", "bootstrap",
                   "--offline", "--quiet")
    monkeypatch.setenv("NGC_GPU", "none")  # a host with GPUs runs its preflight every time
    assert plain().returncode == 0  # a whole run, where the module's run kept no memo
    answered = plain()
    assert answered.returncode == 0, answered.stderr[-2000:]
    assert "26.11: nothing to do" in answered.stdout
    registry = parse_registry(project.registry)
    jax = registry.get_manifest("jax", TAG)
    assert jax is not None
    other = registry.get_manifest("jax", sbom_tag(jax.digest))  # a manifest the repo holds
    assert other is not None
    registry.put_manifest("jax", TAG, other)  # another client's push
    try:
        moved = plain()
        assert moved.returncode == 1
        assert "nothing to do" not in moved.stdout
        assert f"{project.registry}/jax:{TAG} already points at {other.digest}" in moved.stderr
    finally:
        registry.put_manifest("jax", TAG, jax)
    whole = plain()
    assert (whole.returncode, "nothing to do" in whole.stdout) == (0, False), whole.stderr[-2000:]
    again = plain()
    assert (again.returncode, "nothing to do" in again.stdout) == (0, True)


@pytest.mark.extended
def test_a_bump_rebuilds_only_that_image_and_needs_force_to_move_its_tag(
    project: Project,
) -> None:
    before = project.digests()
    text = project.manifest.read_text()
    project.manifest.write_text(text.replace(
        "    variant: cpu\n", "    variant: cpu\n    extra_packages:\n      six: \"1.17.0\"\n"))
    stale = cli("plan", str(project.manifest), "--registry", project.registry)
    assert stale.returncode == 2 and "images.jax: lock is stale (pip: +six==1.17.0)" in (
        stale.stderr)
    relocked = cli("lock", str(project.manifest), "--only", "jax")
    assert relocked.returncode == 0, relocked.stderr[-2000:]
    assert "changed: +six 1.17.0" in relocked.stdout
    # The new wheel into the cache, as a user does before an --offline release: no earlier
    # run on this machine decides whether it is there.
    fetched = cli("fetch", str(project.manifest))
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    plan = json.loads(cli("plan", str(project.manifest), "--registry", project.registry,
                          "--build-dir", str(project.build_dir), "--json").stdout)["images"]
    jax = next(i for i in plan if i["image"] == "jax")
    # "reuse" where an earlier test run on this machine built an image from the same key
    assert jax["build"] in ("build", "reuse") and "requirements.txt changed" in jax["reasons"]
    assert "lock: +six 1.17.0" in jax["reasons"]
    refused = project.release()
    assert refused.returncode == 1
    built, pushed = built_and_pushed(refused)
    assert built in ([], ["jax"]) and pushed == ["jax"]
    assert "release tags are immutable" in project.record()["images"]["jax"]["push"]["error"]
    assert project.digests() == before  # the candidate is staged, no tag moved
    assert f"{TAG}-rc2" in parse_registry(project.registry).list_tags("jax")
    forced = project.release("--force")
    assert forced.returncode == 0, forced.stderr[-2000:]
    assert built_and_pushed(forced) == ([], [])  # the staged candidate is promoted as is
    after = project.digests()
    assert after["base"] == before["base"] and after["cuda-mini"] == before["cuda-mini"]
    moved = project.record()["images"]["jax"]["push"]
    assert after["jax"] == moved["digest"] != before["jax"]
    assert f"{before['jax']} -> {moved['digest']}" in moved["forced"][0]


def test_a_failed_validation_holds_the_release_tag_and_verify_reports_it(
    project: Project, docker_client: Any,
) -> None:
    """An image that built and failed its validation (one that fails to build has nothing
    to tag: the CI release's `broken` cannot show this) is never tagged for the registry."""
    held = project.digests()["jax"]
    probe = project.root / "frameworks" / "jax" / "probe.py"
    probe.write_text(probe.read_text() + (
        "\n\ndef _broken(ctx):\n    ctx.fail('broken on purpose')\n\n\n"
        "_register = register\n\n\ndef register(suite):\n    _register(suite)\n"
        "    suite.check('jax.broken_on_purpose')(_broken)\n"))
    done = project.release("--force")
    assert done.returncode == 1
    jax = project.record()["images"]["jax"]
    assert jax["validation"]["failed_checks"] == ["jax.broken_on_purpose"]
    assert jax["push"]["status"] == "blocked"
    assert project.digests()["jax"] == held  # even --force moves only what passed
    failed = docker_client.images.get(jax["build"]["image_id"])
    assert not [tag for tag in failed.tags if tag.startswith(project.registry)], failed.tags
    verified = cli("verify", str(project.manifest), "--registry", project.registry,
                   "--build-dir", str(project.build_dir))
    assert verified.returncode == 1
    assert f"{project.registry}/jax:{TAG}: the record has no published digest" in \
        verified.stderr
    assert "ok       " in verified.stdout  # base and cuda-mini still verify


@pytest.mark.extended  # CI: the registry killed mid-push in `make test-faults`
def test_a_registry_stopped_mid_release_loses_nothing_and_pushes_nothing_twice(
    tmp_path: Path,
) -> None:
    own = SUITE_REGISTRY.own
    if own is None:
        pytest.skip("NGC_TEST_REGISTRY names a registry of the user's: a test does not stop it")
    fresh = new_project(tmp_path)
    run = subprocess.Popen(
        [*cli_command(), "release", str(fresh.manifest), "--registry", fresh.registry,
         "--build-dir", str(fresh.build_dir), "--os-source", "bootstrap", "--offline",
         "--json"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 900
        # Base's content tag is set last, after its release tag and aliases: waiting for the
        # release tag alone sometimes stopped the registry in the middle of base's promotion.
        while not any(tag.startswith("key-")
                      for tag in parse_registry(fresh.registry).list_tags("base")):
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.5)
        own.stop(signal.SIGTERM)  # the session's own registry: no one else's is stopped
        run.communicate(timeout=1800)
    finally:
        SUITE_REGISTRY.restart()
    assert run.returncode == 1
    stopped = fresh.record()["images"]
    assert stopped["base"]["push"]["status"] == "ok"
    assert "failed" in {stopped[n]["push"]["status"] for n in ("cuda-mini", "jax")}
    again = fresh.release()
    assert again.returncode == 0, again.stderr[-2000:]
    registry = parse_registry(fresh.registry)
    for name in IMAGES:
        candidates = [t for t in registry.list_tags(name) if t.startswith(f"{TAG}-rc")]
        record = fresh.record()["images"][name]
        assert record["push"]["status"] == "ok"
        assert registry.manifest_digest(name, TAG) == record["push"]["digest"]
        assert len({registry.manifest_digest(name, t) for t in candidates}) == 1, name
    verified = cli("verify", str(fresh.manifest), "--registry", fresh.registry, "--build-dir",
                   str(fresh.build_dir))
    assert verified.returncode == 0, verified.stderr


def cli_command() -> list[str]:
    import sys

    return [sys.executable, "-m", "ngc_builder"]


@pytest.mark.extended
def test_a_retired_release_is_rebuilt_to_the_same_tags(project: Project, tmp_path: Path) -> None:
    probe = project.root / "frameworks" / "jax" / "probe.py"
    shutil.copyfile(REPO / "frameworks" / "jax" / "probe.py", probe)  # repaired
    assert project.release("--force").returncode == 0
    archive = tmp_path / "archive"
    reported = cli("report", str(project.manifest), "--build-dir", str(project.build_dir),
                   "--out", str(tmp_path / "matrix.md"), "--notes", str(tmp_path / "notes"),
                   "--archive", str(archive))
    assert reported.returncode == 0, reported.stderr
    notes = (tmp_path / "notes" / "26.11.md").read_text()
    assert "## Registry bytes" in notes and "registry stores" in notes
    assert "<details><summary>base: " in notes and "pip==" in notes
    before = project.digests()
    done = cli("rebuild", "26.11", "--archive", str(archive), "--root", str(project.root),
               "--registry", project.registry, "--build-dir", str(tmp_path / "build"), "--fresh")
    assert done.returncode == 0, done.stderr[-3000:]
    # Every layer built again (--fresh: no engine cache either), minutes later: the archived
    # digests, and no tag moved.
    after = project.digests()
    assert after == before and all(after.values())
    rebuilds = json.loads((archive / "26.11" / "release.json").read_text())["rebuilds"]
    assert rebuilds == []
    # Rebuilt from the archived lock: the same pip and dpkg package set as archived.
    assert (archive / "26.11" / "manifest.lock.json").is_file()
    # (An image the release took from the registry by its key has no manifest listed here.)
    reports = tmp_path / "build" / "rebuild-26.11" / "26.11" / "reports"
    listed = sorted((archive / "26.11" / "packages").glob("*.json"))
    assert {path.stem for path in listed} >= {"base", "cuda-mini"}
    for path in listed:
        rebuilt = reports / f"{path.stem}.packages.json"
        assert json.loads(rebuilt.read_text()) == json.loads(path.read_text()), path.stem


def test_an_image_past_its_size_baseline_fails_naming_what_it_added(tmp_path: Path) -> None:
    fresh = new_project(tmp_path)
    text = fresh.manifest.read_text()
    fresh.manifest.write_text(text.replace("    variant: cpu\n",
                                           "    variant: cpu\n    size_baseline: \"100 MB\"\n"))
    done = fresh.release("--only", "jax")
    assert done.returncode == 1
    jax = fresh.record()["images"]["jax"]
    assert jax["validation"]["verdict"] == "pass"
    assert jax["push"]["status"] == "blocked"
    error = jax["push"]["error"]
    assert "size gate" in error and "baseline 100 MB" in error
    assert "/opt/venv/lib/python3.13/site-packages/jaxlib (+" in error  # the largest addition
    assert parse_registry(fresh.registry).manifest_digest("jax", TAG) is None
