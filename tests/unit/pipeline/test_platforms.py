"""The failure policy of another platform (pipeline/platforms.py): a required platform that
fails keeps the whole image out (its push blocked, the image failed); one the manifest lists in
`optional_platforms` is left out with its reason, and the image ships without it."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ngc_builder.assemble.image import BuildOutcome
from ngc_builder.errors import StepError
from ngc_builder.lock.models import OsLock, PlatformLock
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline import lifecycle, platforms
from ngc_builder.pipeline.run import PlatformInputs, Run, RunState
from ngc_builder.plan.dag import ImageSpec, plan_release
from ngc_builder.records.record import DEFERRED, ImageRecord, PlatformRecord
from ngc_builder.render.installs import VENV_TAR
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import FakeEngine, Setup

pytestmark = pytest.mark.unit

ARM = "linux/arm64"
BOTH = "    platforms: [linux/amd64, linux/arm64]\n"


def _run(write_release: WriteRelease, tmp_path: Path, extra: str) -> Run:
    text = GOOD_RELEASE.replace('    version: "0.12.0"\n', f'    version: "0.12.0"\n{extra}')
    plan = plan_release(load_release(write_release(text, lock=False)))
    return Setup(plan, {}, tmp_path, {}, FakeEngine()).run()


def _validation_fails_on_arm64(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The platform's build passes; its emulated validation fails as the runner reports it."""
    built: list[str] = []
    def build(run: Run, spec: object, record: ImageRecord, platform: str,
              entry: PlatformRecord) -> None:
        built.append(platform)
        entry.build.status = "ok"

    def validate(run: Run, spec: object, record: ImageRecord, platform: str,
                 entry: PlatformRecord) -> None:
        entry.validation.status, entry.validation.verdict = "failed", "fail"
        raise StepError("jax", f"validate {platform}", "failed: jax.train_cpu")
    monkeypatch.setattr(platforms, "_build", build)
    monkeypatch.setattr(platforms, "_validate", validate)
    return built


def test_a_required_platform_that_fails_keeps_the_whole_image_out(
        write_release: WriteRelease, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = _validation_fails_on_arm64(monkeypatch)
    run = _run(write_release, tmp_path, BOTH)
    record = ImageRecord(name="jax", kind="framework")
    with pytest.raises(StepError) as caught:
        platforms.build_platforms(run, run.inputs.plan.get("jax"), record)
    assert (caught.value.step, caught.value.message) == ("validate linux/arm64",
                                                         "failed: jax.train_cpu")
    assert built == [ARM]
    assert record.push.status == "blocked"
    assert record.push.error == ("linux/arm64 did not pass: validate linux/arm64: failed: "
                                 "jax.train_cpu")
    assert record.failed and platforms.shipped(run.inputs.plan.get("jax"), record) == {}


def test_an_optional_platform_that_fails_is_left_out_and_said(
        write_release: WriteRelease, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _validation_fails_on_arm64(monkeypatch)
    run = _run(write_release, tmp_path, BOTH + "    optional_platforms: [linux/arm64]\n")
    record = ImageRecord(name="jax", kind="framework")
    platforms.build_platforms(run, run.inputs.plan.get("jax"), record)  # no StepError
    assert record.platforms[ARM].left_out == "validate linux/arm64: failed: jax.train_cpu"
    assert record.push.status == "pending" and not record.failed
    # The index is the host's image alone.
    assert platforms.shipped(run.inputs.plan.get("jax"), record) == {}
    run.ui.close()
    log = (tmp_path / "logs").glob("*")
    assert any("linux/arm64 left out (optional_platforms)" in path.read_text()
               for path in log if path.is_file())


def test_a_deferred_platform_is_built_and_staged_unjudged_for_a_job_on_its_own_nodes(
        write_release: WriteRelease, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = _validation_fails_on_arm64(monkeypatch)  # it would fail: it never runs here
    run = _run(write_release, tmp_path, BOTH)
    run = replace(run, policy=replace(run.policy, promote=False, deferred=frozenset({ARM})))
    record = ImageRecord(name="jax", kind="framework")
    platforms.build_platforms(run, run.inputs.plan.get("jax"), record)
    assert built == [ARM] and not record.failed
    assert (record.platforms[ARM].validation.status,
            record.platforms[ARM].validation.verdict) == ("skipped", DEFERRED)
    assert list(platforms.shipped(run.inputs.plan.get("jax"), record)) == [ARM]
    run.ui.close()


def test_a_platform_the_manifest_no_longer_lists_is_not_shipped_from_an_old_record(
        write_release: WriteRelease, tmp_path: Path) -> None:
    run = _run(write_release, tmp_path, "")  # jax: linux/amd64 alone now
    record = ImageRecord(name="jax", kind="framework")
    record.platforms[ARM] = PlatformRecord()
    record.platforms[ARM].validation.verdict = "pass"  # passed when arm64 was still listed
    assert platforms.shipped(run.inputs.plan.get("jax"), record) == {}
    run.ui.close()


def test_an_image_shipping_its_host_platform_alone_this_time_is_no_index(
        write_release: WriteRelease, tmp_path: Path) -> None:
    """An earlier run pushed an index; this run left the optional arm64 out: the candidate is
    the host's image itself, and nothing reads it as an index (SBOMs, signatures, verify)."""
    run = _run(write_release, tmp_path, BOTH + "    optional_platforms: [linux/arm64]\n")
    record = ImageRecord(name="jax", kind="framework")
    record.push.host_digest = "sha256:" + "b" * 64
    record.platforms[ARM] = PlatformRecord(left_out="validate linux/arm64: failed: x")
    host = "sha256:" + "a" * 64
    assert platforms.push_platforms(run, run.inputs.plan.get("jax"), record, host,
                                    "26.11-py3-rc2") == host
    assert record.push.host_digest is None
    run.ui.close()


@pytest.mark.parametrize("fails", [None, "build", "context"])
def test_an_arm64_build_s_venv_tar_goes_once_the_build_is_done(
        write_release: WriteRelease, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        fails: str | None) -> None:
    """The tars of a layer's wheels installed on the host are GBs for a CUDA stack (7.2 GB for
    26.12's three arm64 layers): in the image once built, made again for a rebuild, and gone
    too when the second tar's install fails after the first was written."""
    folder, seen, tars = tmp_path / "context" / "jax.arm64", [], ("venv-1.tar", VENV_TAR)

    def context(*args: object) -> Path:
        folder.mkdir(parents=True)
        for tar in tars:
            (folder / tar).write_bytes(b"the wheels, installed")
            if fails == "context":
                raise StepError("jax", "install linux/arm64", "wheel refused")
        return folder

    def build(*args: object, **kwargs: object) -> BuildOutcome:
        seen.append(all((folder / tar).is_file() for tar in tars))
        if fails == "build":
            raise StepError("jax", "build linux/arm64", "exit 1")
        return BuildOutcome("sha256:" + "c" * 64, 12.0, 1000, "sha256:" + "b" * 64)
    monkeypatch.setattr(platforms, "platform_context", context)
    monkeypatch.setattr(platforms, "build_image", build)
    run = _run(write_release, tmp_path, BOTH)
    render: Any = SimpleNamespace(local_ref="ngc-local/jax:arm64", platform=ARM,
                                  folder_name="jax.arm64",
                                  spec=SimpleNamespace(kind="framework"),
                                  venv_tars={"venv-1.tar": ["jax"], VENV_TAR: ["numpy"]})
    inputs = PlatformInputs({"jax": render}, PlatformLock(images={}, os={
        "debian-trixie": OsLock(suite="trixie", epoch=0, apt=[])}), {}, lambda _: tmp_path,
        {"debian-trixie": "3.13"})
    record = ImageRecord(name="jax", kind="framework")
    try:
        platforms._build_new(run, run.inputs.plan.get("jax"), record, {}, inputs)
    except StepError:
        assert fails
    assert seen == ([] if fails == "context" else [True])
    assert folder.is_dir() and not any((folder / tar).exists() for tar in tars)
    run.ui.close()


def test_a_parent_kept_out_by_its_platform_keeps_its_started_children_from_pushing(
        write_release: WriteRelease, tmp_path: Path) -> None:
    """Children build once the parent's own platform passed, while its arm64 is still being
    built and validated; when that then fails, their push is refused: nothing is published on
    an image the release does not hold."""
    text = GOOD_RELEASE.replace('    version: "0.12.0"\n', f'    version: "0.12.0"\n{BOTH}')
    plan = plan_release(load_release(write_release(text, lock=False)))
    engine = FakeEngine()
    run = Setup(plan, {}, tmp_path, {}, engine).run()
    jax = plan.get("jax")
    assert jax.parent is not None
    parent = ImageRecord(name=jax.parent, kind="cuda")
    parent.push.status = "blocked"
    parent.push.error = "linux/arm64 did not pass: validate linux/arm64: failed: x"
    run.state.record.images[jax.parent] = parent
    run.state.published(jax.parent).set()
    record = ImageRecord(name="jax", kind="framework", parent=jax.parent)
    record.build.image_id = "sha256:" + "d" * 64
    with pytest.raises(StepError) as caught:
        lifecycle.push(run, jax, record)
    assert caught.value.message == (f"blocked: {jax.parent} did not pass (linux/arm64 did not "
                                    "pass: validate linux/arm64: failed: x)")
    assert (record.push.status, record.push.error) == ("blocked", f"{jax.parent} did not pass")
    assert engine.calls_of("push") == [] and engine.calls_of("tag") == []
    run.ui.close()


def test_a_child_s_platform_build_waits_for_its_parent_s(
        write_release: WriteRelease, tmp_path: Path) -> None:
    """The parent's arm64 image is there before its child's arm64 build looks for it; a
    parent this run does not go through holds nobody back."""
    run = _run(write_release, tmp_path, BOTH)
    jax = run.inputs.plan.get("jax")
    assert jax.parent is not None
    assert run.state.platforms_built(jax.parent).is_set()  # not in this run
    fresh = RunState(run.state.record, tmp_path / "again.json")
    fresh.scheduled([jax.parent])
    waiting = fresh.platforms_built(jax.parent)
    assert not waiting.is_set()
    parent = ImageRecord(name=jax.parent, kind="cuda")
    run.state.record.images[jax.parent] = parent
    seen: list[str] = []
    worker = threading.Thread(target=lambda: seen.append(_parent_error(
        replace(run, state=fresh), jax)))
    worker.start()
    time.sleep(0.3)
    assert worker.is_alive() and seen == []  # waiting for the parent's platform builds
    parent.platforms[ARM] = PlatformRecord()  # its arm64 build failed: no image, no digest
    waiting.set()
    worker.join(5)
    assert seen == [f"{jax.parent}'s linux/arm64 image is not here"]
    run.ui.close()


def _parent_error(run: Run, spec: ImageSpec) -> str:
    try:
        platforms._parent_for(run, spec, ARM)
    except StepError as exc:
        return exc.message
    return "no error"
