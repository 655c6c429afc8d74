"""The pipeline (build -> validate -> push per image) against a fake Docker client.

The fake engine keeps images, tags and a fake registry in memory and records every call,
so each test can prove what was (and was never) tagged or pushed.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker.errors
import pytest
import requests

from ngc_builder import pipeline, publish
from ngc_builder.manifest import load_release
from ngc_builder.pipeline import Run, run_images
from ngc_builder.plan import ReleasePlan, plan_release
from ngc_builder.record import ReleaseRecord, load_record
from ngc_builder.render import RenderedImage, render_release
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.stackcheck import check_stacks
from ngc_builder.ui import Ui
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE, fake_fetch

pytestmark = pytest.mark.unit

Chunk = Mapping[str, Any]
OS_ID = "sha256:" + "05" * 32
REGISTRY = "localhost:5000"
TAG = "26.11-py3"
ALL = ["base", "cuda-cu13", "pytorch", "jax"]


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass
class FakeEngine:
    """Images, tags and a registry in memory; failures chosen per image name."""

    fail_build: set[str] = field(default_factory=set)
    fail_validation: set[str] = field(default_factory=set)
    fail_push: set[str] = field(default_factory=set)
    hang_validation: set[str] = field(default_factory=set)
    drop_label: dict[str, str] = field(default_factory=dict)
    images: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> name, labels
    tags: dict[str, str] = field(default_factory=dict)  # ref -> id
    registry: dict[tuple[str, str], str] = field(default_factory=dict)  # (name, tag) -> digest
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    builds: int = 0

    def calls_of(self, kind: str) -> list[tuple[Any, ...]]:
        return [call for call in self.calls if call[0] == kind]

    def built(self) -> list[str]:
        return [call[1] for call in self.calls_of("build")]

    def touched_remote(self, name: str) -> list[tuple[Any, ...]]:
        """Every tag or push call that names `name` in the registry."""
        repository = f"{REGISTRY}/{name}"
        return [call for call in self.calls
                if (call[0] == "tag" and call[2] == repository)
                or (call[0] == "push" and call[1] == repository)]


class FakeApi:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine

    def build(self, *, path: str, tag: str, labels: dict[str, str], **kwargs: Any,
              ) -> Iterator[Chunk]:
        engine = self.engine
        name = Path(path).name
        engine.calls.append(("build", name, tag, kwargs))
        yield {"stream": f"Step 1/2 : FROM parent-of-{name}\n"}
        if name in engine.fail_build:
            yield {"stream": "Step 2/2 : RUN pip install ...\n"}
            yield {"errorDetail": {"code": 1, "message": f"{name}: pip install returned 1"},
                   "error": f"{name}: pip install returned 1"}
            yield {"stream": "after the error\n"}
            return
        engine.builds += 1
        image_id = _sha(f"{tag}|{engine.builds}")
        kept = {k: v for k, v in labels.items() if k != engine.drop_label.get(name)}
        engine.images[image_id] = {"name": name, "labels": kept}
        engine.tags[tag] = image_id
        yield {"aux": {"ID": image_id}}
        yield {"stream": f"Successfully built {image_id[7:19]}\n"}

    def _resolve(self, ref: str) -> str:
        image_id = ref if ref in self.engine.images else self.engine.tags.get(ref)
        if image_id is None or image_id not in self.engine.images:
            raise docker.errors.ImageNotFound(f"No such image: {ref}")
        return image_id

    def inspect_image(self, ref: str) -> dict[str, Any]:
        image_id = self._resolve(ref)
        image = self.engine.images[image_id]
        return {"Id": image_id, "Size": 1_000_000, "Config": {"Labels": dict(image["labels"])}}

    def tag(self, image: str, repository: str, tag: str) -> bool:
        self.engine.calls.append(("tag", image, repository, tag))
        self.engine.tags[f"{repository}:{tag}"] = self._resolve(image)
        return True

    def push(self, repository: str, *, tag: str, **kwargs: Any) -> Iterator[Chunk]:
        engine = self.engine
        engine.calls.append(("push", repository, tag))
        name = repository.rsplit("/", 1)[-1]
        yield {"status": f"The push refers to repository [{repository}]"}
        if name in engine.fail_push:
            message = (f"Get \"http://{REGISTRY}/v2/\": dial tcp 127.0.0.1:5000: "
                       "connect: connection refused")
            yield {"errorDetail": {"message": message}, "error": message}
            return
        digest = _sha(f"manifest of {engine.tags[f'{repository}:{tag}']}")
        engine.registry[(name, tag)] = digest
        yield {"status": f"{tag}: digest: {digest} size: 1234"}
        yield {"progressDetail": {}, "aux": {"Tag": tag, "Digest": digest, "Size": 1234}}

    def remove_image(self, ref: str, noprune: bool = False) -> None:
        self.engine.calls.append(("remove_image", ref, noprune))
        if ref not in self.engine.tags:
            raise docker.errors.ImageNotFound(f"No such image: {ref}")
        del self.engine.tags[ref]


class FakeContainer:
    def __init__(self, report: RunReport, hangs: bool = False) -> None:
        self.report = report
        self.hangs = hangs
        self.removed = False

    def start(self) -> None:
        pass

    def wait(self, timeout: int | None = None) -> dict[str, int]:
        if self.hangs:  # what docker-py raises when the runner outlives `timeout`
            raise requests.exceptions.ReadTimeout("Read timed out. (read timeout=1800)")
        return {"StatusCode": 0 if self.report.verdict == "pass" else 1}

    def logs(self, stdout: bool = True, stderr: bool = True) -> bytes:
        if stdout and not stderr:
            return json.dumps(self.report.to_dict()).encode()
        return b"runner: done\n"

    def remove(self, force: bool = False) -> None:
        self.removed = True


class FakeContainers:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.created: list[FakeContainer] = []

    def create(self, image: str, command: list[str], **kwargs: Any) -> FakeContainer:
        name = self.engine.images[image]["name"]
        self.engine.calls.append(("create", name, image, kwargs.get("network_disabled")))
        report = RunReport(image=name, python="3.13.5", platform="linux-x86_64",
                           gpu_mode=kwargs["environment"]["NGC_GPU"], gpu_expected=False)
        report.checks.append(CheckResult("python.version", "T0", "pass", "3.13 as expected"))
        if name in self.engine.fail_validation:
            report.checks.append(CheckResult("framework.import", "T0", "fail",
                                             "ImportError: libcudnn.so.9", fault="image"))
        report.checks.append(CheckResult("gpu.visible", "T1", "skip", "no GPU"))
        container = FakeContainer(report, hangs=name in self.engine.hang_validation)
        self.created.append(container)
        return container


class FakeClient:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.api = FakeApi(engine)
        self.containers = FakeContainers(engine)


@dataclass
class Setup:
    plan: ReleasePlan
    rendered: dict[str, RenderedImage]
    tmp: Path
    engine: FakeEngine = field(default_factory=FakeEngine)
    record: ReleaseRecord | None = None

    def run(self, push: bool = True, record: ReleaseRecord | None = None) -> Run:
        self.record = record or self.record or ReleaseRecord(
            release=self.plan.release, registry=self.plan.registry, manifest="26.11.yaml")
        ui = Ui(self.tmp / "logs", show_logs=False, stream=io.StringIO())
        return Run(client=FakeClient(self.engine), plan=self.plan, rendered=self.rendered,
                   context_dir=self.tmp / "context", report_dir=self.tmp / "reports",
                   record=self.record, record_file=self.tmp / "release.json",
                   os_image_id=OS_ID, revision="0123abc", source="https://example.invalid/ngc",
                   gpu_mode="none", push=push, ui=ui)

    def go(self, push: bool = True, only: list[str] | None = None) -> ReleaseRecord:
        run = self.run(push)
        try:
            run_images(run, self.plan.select(only or []))
        finally:
            run.ui.close()
        return run.record


@pytest.fixture
def setup(write_release: WriteRelease, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    loaded = load_release(write_release(GOOD_RELEASE))
    check_stacks(loaded, fake_fetch)  # as `prepare` does, with the fake index
    plan = plan_release(loaded)
    rendered = {image.spec.name: image for image in render_release(loaded, plan, None)}
    for image in rendered.values():
        image.write(tmp_path / "context")
    state = Setup(plan, rendered, tmp_path)

    def fake_manifest_digest(registry: str, name: str, tag: str) -> str | None:
        assert registry == REGISTRY
        return state.engine.registry.get((name, tag))

    monkeypatch.setattr(pipeline, "manifest_digest", fake_manifest_digest)
    monkeypatch.setattr(publish, "manifest_digest", fake_manifest_digest)
    return state


# --- the happy path ----------------------------------------------------------------------


def test_everything_builds_validates_and_pushes(setup: Setup) -> None:
    record = setup.go()
    engine = setup.engine
    assert engine.built() == ALL
    for name in ALL:
        image = record.images[name]
        assert (image.build.status, image.validation.status, image.push.status) == (
            "ok", "ok", "ok"), name
        assert image.validation.verdict == "pass"
        assert image.push.ref == f"{REGISTRY}/{name}:{TAG}"
        assert image.push.digest == engine.registry[(name, TAG)]
        assert image.push.image_id == image.build.image_id
        assert not image.failed
    # Each candidate was built under its local ref, FROM the exact parent it was keyed on.
    builds = {call[1]: call for call in engine.calls_of("build")}
    assert builds["jax"][2] == setup.rendered["jax"].local_ref
    assert builds["jax"][3]["pull"] is False
    # Validation ran without a network, and the reports landed next to the record.
    assert all(call[3] is True for call in engine.calls_of("create"))
    assert Path(str(record.images["jax"].validation.report)).is_file()
    assert Path(str(record.images["jax"].validation.junit)).is_file()
    assert record.finished is not None
    saved = load_record(setup.tmp / "release.json")
    assert saved is not None
    assert saved.model_dump() == record.model_dump()


def test_no_push_skips_tagging(setup: Setup) -> None:
    record = setup.go(push=False)
    assert setup.engine.calls_of("tag") == [] and setup.engine.calls_of("push") == []
    assert {record.images[n].push.status for n in ALL} == {"skipped"}
    assert record.images["jax"].validation.verdict == "pass"


# --- (a) a failed build ------------------------------------------------------------------


def test_build_stream_error_fails_that_image_only(setup: Setup) -> None:
    setup.engine.fail_build = {"jax"}
    record = setup.go()
    engine = setup.engine
    jax = record.images["jax"]
    assert jax.build.status == "failed"
    assert jax.build.error == "jax: pip install returned 1"
    assert jax.build.image_id is None
    assert (jax.validation.status, jax.push.status) == ("blocked", "blocked")
    assert jax.failed
    assert engine.touched_remote("jax") == []
    assert [call for call in engine.calls_of("create") if call[1] == "jax"] == []
    # The sibling was built, validated and pushed.
    torch = record.images["pytorch"]
    assert (torch.build.status, torch.validation.verdict, torch.push.status) == (
        "ok", "pass", "ok")
    assert ("push", f"{REGISTRY}/pytorch", TAG) in engine.calls
    assert engine.registry[("pytorch", TAG)] == torch.push.digest
    assert ("jax", TAG) not in engine.registry
    # The whole stream went to the image's log, the error included.
    log = (setup.tmp / "logs" / "jax.log").read_text(encoding="utf-8")
    assert "ERROR: jax: pip install returned 1" in log
    assert "after the error" in log


# --- (b) a failed validation -------------------------------------------------------------


def test_failed_validation_is_never_tagged_or_pushed(setup: Setup) -> None:
    setup.engine.fail_validation = {"jax"}
    record = setup.go()
    jax = record.images["jax"]
    assert jax.build.status == "ok"
    assert (jax.validation.status, jax.validation.verdict) == ("failed", "fail")
    assert jax.validation.failed_checks == ["framework.import"]
    assert jax.push.status == "blocked"
    assert setup.engine.touched_remote("jax") == []
    evidence = json.loads(Path(str(jax.validation.report)).read_text(encoding="utf-8"))
    assert evidence["verdict"] == "fail"
    assert record.images["pytorch"].push.status == "ok"


def test_wrong_labels_fail_validation(setup: Setup) -> None:
    setup.engine.drop_label = {"pytorch": "org.ngc-builder.cudnn"}
    record = setup.go()
    torch = record.images["pytorch"]
    assert torch.validation.verdict == "fail"
    assert torch.validation.failed_checks == ["labels"]
    assert setup.engine.touched_remote("pytorch") == []
    assert record.images["jax"].push.status == "ok"


# --- (c) blocked children ----------------------------------------------------------------


def test_children_of_a_failed_build_are_blocked(setup: Setup) -> None:
    setup.engine.fail_build = {"cuda-cu13"}
    record = setup.go()
    assert setup.engine.built() == ["base", "cuda-cu13"]
    assert record.images["base"].push.status == "ok"
    for name in ("pytorch", "jax"):
        image = record.images[name]
        assert (image.build.status, image.validation.status, image.push.status) == (
            "blocked", "blocked", "blocked")
        assert image.build.error == "cuda-cu13 did not pass"
        assert setup.engine.touched_remote(name) == []


def test_children_of_a_failed_validation_are_blocked(setup: Setup) -> None:
    setup.engine.fail_validation = {"base"}
    record = setup.go()
    assert setup.engine.built() == ["base"]
    assert setup.engine.calls_of("push") == []
    assert {record.images[n].build.status for n in ("cuda-cu13", "pytorch", "jax")} == {
        "blocked"}


# --- (d) a failed push -------------------------------------------------------------------


def test_push_stream_error_fails_the_push_and_untags(setup: Setup) -> None:
    setup.engine.fail_push = {"jax"}
    record = setup.go()
    engine = setup.engine
    jax = record.images["jax"]
    ref = f"{REGISTRY}/jax:{TAG}"
    assert (jax.build.status, jax.validation.verdict) == ("ok", "pass")
    assert jax.push.status == "failed"
    assert "connection refused" in str(jax.push.error)
    assert jax.push.digest is None
    assert jax.failed
    assert ("remove_image", ref, True) in engine.calls
    assert ref not in engine.tags
    assert ("jax", TAG) not in engine.registry
    assert record.images["pytorch"].push.status == "ok"


def test_push_not_confirmed_by_the_registry_fails(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(publish, "manifest_digest", lambda *_: _sha("someone else's"))
    record = setup.go(only=["base"])
    assert record.images["base"].push.status == "failed"
    assert "registry holds" in str(record.images["base"].push.error)
    assert f"{REGISTRY}/base:{TAG}" not in setup.engine.tags


# --- (e) resuming ------------------------------------------------------------------------


def test_rerun_with_the_same_record_reuses_everything(setup: Setup) -> None:
    first = setup.go()
    ids = {name: first.images[name].build.image_id for name in ALL}
    calls = len(setup.engine.calls)
    second = setup.go()
    assert setup.engine.built() == ALL  # no second build call
    assert setup.engine.calls[calls:] == []  # nor a container, a tag or a push
    for name in ALL:
        image = second.images[name]
        assert image.build.reused and image.build.image_id == ids[name]
        assert image.validation.reused and image.validation.verdict == "pass"
        assert image.push.reused and image.push.status == "ok"


def test_rerun_from_the_saved_record_reuses_the_build(setup: Setup) -> None:
    setup.go()
    saved = load_record(setup.tmp / "release.json")
    assert saved is not None
    setup.record = saved
    record = setup.go()
    assert setup.engine.built() == ALL
    assert all(record.images[name].build.reused for name in ALL)


def test_rerun_rebuilds_an_image_the_engine_lost(setup: Setup) -> None:
    first = setup.go()
    lost = first.images["jax"].build.image_id
    assert lost is not None
    del setup.engine.images[lost]
    second = setup.go()
    assert setup.engine.built() == [*ALL, "jax"]
    jax = second.images["jax"]
    assert not jax.build.reused and jax.build.image_id != lost
    assert jax.validation.verdict == "pass"
    assert jax.push.status == "ok" and not jax.push.reused


def test_rerun_after_a_failure_only_redoes_the_failed_image(setup: Setup) -> None:
    setup.engine.fail_build = {"jax"}
    setup.go()
    setup.engine.fail_build = set()
    record = setup.go()
    assert setup.engine.built() == [*ALL, "jax"]
    assert all(record.images[name].build.reused for name in ("base", "cuda-cu13", "pytorch"))
    assert record.images["jax"].push.status == "ok"
    assert not any(image.failed for image in record.images.values())


def test_changed_parent_rebuilds_the_children(setup: Setup, tmp_path: Path) -> None:
    setup.go()
    bundle = tmp_path / "ca.crt"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    loaded = load_release(setup.tmp / "project" / "releases" / "26.11.yaml")
    setup.rendered = {i.spec.name: i for i in render_release(loaded, setup.plan, bundle)}
    record = setup.go()
    assert setup.engine.built() == ALL + ALL
    assert not any(record.images[name].build.reused for name in ALL)


# --- known gaps --------------------------------------------------------------------------


def test_validation_timeout_fails_that_image_only(setup: Setup) -> None:
    setup.engine.hang_validation = {"jax"}
    record = setup.go()
    assert record.images["jax"].validation.status == "failed"
    assert setup.engine.touched_remote("jax") == []
    assert record.images["pytorch"].push.status == "ok"


def test_a_cpu_validation_is_not_reused_on_a_gpu_run(setup: Setup) -> None:
    setup.go()
    run = setup.run()
    run.gpu_mode = "required"
    calls = len(setup.engine.calls)
    try:
        run_images(run, setup.plan.select(["jax"]))
    finally:
        run.ui.close()
    jax = run.record.images["jax"].validation
    assert not jax.reused and jax.gpu_mode == "required"
    assert any(call[0] == "create" for call in setup.engine.calls[calls:])
