"""The pipeline (build -> validate -> push per image) against a fake Docker client.

The fake engine keeps images, tags and a fake registry in memory and records every call,
so each test can prove what was (and was never) tagged or pushed.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import docker.errors
import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline import tidy
from ngc_builder.pipeline.images import run_images
from ngc_builder.records.record import load_record
from ngc_builder.render.content_keys import content_keys, image_key
from ngc_builder.render.contexts import render_release
from tests.unit.fake_engine import ALL, REGISTRY, TAG, FakeApi, Setup
from tests.unit.locks import deb, fake_lock

pytestmark = pytest.mark.unit


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
        # Pushed once, to a staging tag; the release and content tags were then pointed at
        # the same manifest through the registry API.
        assert image.push.ref == f"{REGISTRY}/{name}:{TAG}-rc1"
        assert engine.calls_of("push").count(("push", f"{REGISTRY}/{name}", f"{TAG}-rc1")) == 1
        key_tag = setup.keys[name].tag
        assert image.push.digest == engine.registry[(name, TAG)] == engine.registry[(name, key_tag)]
        assert image.push.promoted == [TAG, key_tag]
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


def test_each_step_records_when_it_ended(setup: Setup) -> None:
    record = setup.go()
    assert record.finished is not None
    for name in ALL:
        image = record.images[name]
        for step in (image.build, image.validation, image.push):
            assert step.ended is not None and record.started <= step.ended <= record.finished


def test_the_timeline_holds_every_step_of_every_image_in_order(setup: Setup) -> None:
    record = setup.go()
    assert record.timeline_started is not None and record.timeline[0].step == "prepare"
    for name in ALL:
        spans = [span for span in record.timeline if span.image == name]
        steps = [span.step for span in spans]
        assert steps[:3] == ["build", "validate", "size"] and "push" in steps, (name, steps)
        assert steps[-2:] == ["promote", "tidy"]
        for before, after in itertools.pairwise(spans):
            assert before.end is not None and before.start <= before.end == after.start
        assert spans[-1].end is not None and spans[-1].worker.startswith("image")
    # A child builds once its parent passed its size gate (its push may still be going).
    parent_sized = next(s for s in record.timeline if s.image == "cuda-cu13" and
                        s.step == "size")
    child_built = next(s for s in record.timeline if s.image == "jax" and s.step == "build")
    assert parent_sized.end is not None and child_built.start >= parent_sized.end
    assert record.model_dump() == load_record(setup.tmp / "release.json").model_dump()  # type: ignore[union-attr]


def test_a_published_image_nothing_is_built_on_leaves_the_engine(setup: Setup,
                                                                   tmp_path: Path) -> None:
    """The registry holds it: its local copy goes at once; the parents stay as the next
    build's layer cache, and the run says what it left behind."""
    run = setup.run()
    try:
        run_images(run, setup.plan.select([]))
        line = tidy.left_behind(run, setup.plan.select([]), tmp_path)
    finally:
        run.ui.close()
    record, engine = run.state.record, setup.engine
    local = {name for name in ALL if record.images[name].build.image_id in engine.images}
    assert local == {"base", "cuda-cu13"}
    assert not any(ref.startswith(("ngc-local/pytorch", "ngc-local/jax")) for ref in engine.tags)
    assert line == ("left on the engine: 2 parent images as the next build's layer cache "
                    "(base, cuda-cu13); the package cache holds 0.00 GB")


def test_an_image_the_engine_will_not_drop_stays_and_the_release_passes(
        setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: FakeApi, image: str, noprune: bool = False) -> None:
        raise docker.errors.APIError(f"conflict: unable to remove {image}: a container uses it")
    monkeypatch.setattr(FakeApi, "remove_image", refuse)
    record = setup.go()
    assert {record.images[name].outcome for name in ALL} == {"ok"}
    assert record.images["jax"].build.image_id in setup.engine.images
    log = (setup.tmp / "logs" / "jax.log").read_text()
    assert "note: its local image stays (APIError: conflict: unable to remove" in log


def test_nothing_is_dropped_that_the_registry_does_not_hold(setup: Setup) -> None:
    record = setup.go(push=False)
    assert all(record.images[name].build.image_id in setup.engine.images for name in ALL)


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
    assert ("push", f"{REGISTRY}/pytorch", f"{TAG}-rc1") in engine.calls
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
    ref = f"{REGISTRY}/jax:{TAG}-rc1"
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
    setup: Setup,
) -> None:
    setup.engine.foreign_candidates = True
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


def test_a_published_image_the_engine_lost_is_not_rebuilt(setup: Setup) -> None:
    first = setup.go()
    lost = first.images["jax"].build.image_id
    assert lost is not None
    assert lost not in setup.engine.images  # dropped once published: nothing is built on it
    calls = len(setup.engine.calls)
    second = setup.go()
    assert setup.engine.built() == ALL  # the registry holds its key: nothing to do
    assert setup.engine.calls[calls:] == []
    assert second.images["jax"].push.digest == first.images["jax"].push.digest


def test_a_fresh_machine_skips_every_published_image(setup: Setup) -> None:
    first = setup.go()
    setup.engine.images.clear()  # another machine: no images, no record, same registry
    setup.engine.tags.clear()
    setup.record = None
    calls = len(setup.engine.calls)
    second = setup.go()
    assert setup.engine.built() == ALL
    assert setup.engine.calls[calls:] == []  # zero builds, zero pushes, zero tag writes
    for name in ALL:
        assert second.images[name].build.source == "registry"
        assert second.images[name].push.digest == first.images[name].push.digest


def test_a_child_of_a_skipped_parent_pulls_the_parent(setup: Setup) -> None:
    setup.go()
    setup.engine.images.clear()
    setup.engine.tags.clear()
    setup.record = None
    _bump(setup, "jax", "requirements.txt", b"jax[cuda13]==0.12.1\n")
    record = setup.go()
    assert setup.engine.built() == [*ALL, "jax"]
    assert [call[1].split("@")[0] for call in setup.engine.calls_of("pull")] == [
        f"{REGISTRY}/cuda-cu13"]
    assert record.images["jax"].push.status == "failed"  # its release tag is immutable


def _bump(setup: Setup, name: str, file: str, content: bytes) -> None:
    """A framework version bump, as the renderer would show it: one context file changes."""
    image = setup.rendered[name]
    files = {**image.files, file: content}
    setup.rendered[name] = dataclasses.replace(image, files=files)
    parent = setup.keys[setup.plan.get(name).parent or ""].key
    setup.keys[name] = image_key(setup.rendered[name], parent)


def test_a_bump_rebuilds_one_image_and_its_release_tag_needs_force(setup: Setup) -> None:
    published = setup.go().images["jax"].push.digest
    _bump(setup, "jax", "requirements.txt", b"jax[cuda13]==0.12.1\n")
    second = setup.go()
    assert setup.engine.built() == [*ALL, "jax"]
    jax = second.images["jax"]
    assert jax.push.status == "failed" and "immutable" in str(jax.push.error)
    assert jax.push.ref == f"{REGISTRY}/jax:{TAG}-rc2"  # the candidate is staged...
    assert setup.engine.registry[("jax", TAG)] == published  # ...but the release tag held
    assert all(second.images[n].push.status == "ok" for n in ("base", "cuda-cu13", "pytorch"))
    setup.force = True
    third = setup.go()
    assert setup.engine.built() == [*ALL, "jax"]  # the rc is not built or pushed again
    assert setup.engine.calls_of("push").count(("push", f"{REGISTRY}/jax", f"{TAG}-rc2")) == 1
    moved = third.images["jax"].push
    assert moved.status == "ok" and setup.engine.registry[("jax", TAG)] == moved.digest
    assert moved.forced and f"{published} -> {moved.digest}" in moved.forced[0]


def test_registry_down_then_up_finishes_without_pushing_twice(setup: Setup) -> None:
    setup.engine.fail_push = {"pytorch", "jax"}
    first = setup.go()
    assert {first.images[n].push.status for n in ("pytorch", "jax")} == {"failed"}
    setup.engine.fail_push = set()
    second = setup.go()
    assert not any(image.failed for image in second.images.values())
    for name in ALL:  # each image's bytes reached the registry once
        assert [i["name"] for i in setup.engine.pushed_images.values()].count(name) == 1


def test_registry_lost_after_the_push_tags_without_pushing_again(setup: Setup) -> None:
    setup.engine.fail_promote = {"jax"}
    first = setup.go()
    assert first.images["jax"].push.status == "failed"
    assert ("jax", f"{TAG}-rc1") in setup.engine.registry and ("jax", TAG) not in \
        setup.engine.registry
    setup.engine.fail_promote = set()
    second = setup.go()
    assert second.images["jax"].push.status == "ok"
    assert setup.engine.calls_of("push").count(("push", f"{REGISTRY}/jax", f"{TAG}-rc1")) == 1
    assert setup.engine.registry[("jax", TAG)] == setup.engine.registry[("jax", f"{TAG}-rc1")]


def test_children_build_while_their_parent_is_pushed(setup: Setup) -> None:
    setup.jobs = 2
    setup.engine.hold_push = {"cuda-cu13": "pytorch"}  # the stack's push waits for a child
    record = setup.go()
    calls = [(c[0], c[1].rsplit("/", 1)[-1]) for c in setup.engine.calls
             if c[0] in ("build", "push")]
    assert calls.index(("build", "pytorch")) < calls.index(("push", "cuda-cu13"))
    # ...but a child's push waits for its parent's: the shared layers go up once.
    assert calls.index(("push", "cuda-cu13")) < calls.index(("push", "pytorch"))
    assert not any(image.failed for image in record.images.values())


def test_parallel_workers_give_the_same_result(setup: Setup) -> None:
    setup.jobs = 4
    record = setup.go()
    assert sorted(setup.engine.built()) == sorted(ALL)
    assert setup.engine.built().index("cuda-cu13") < setup.engine.built().index("jax")
    assert not any(image.failed for image in record.images.values())


def test_rerun_after_a_failure_only_redoes_the_failed_image(setup: Setup) -> None:
    setup.engine.fail_build = {"jax"}
    setup.go()
    setup.engine.fail_build = set()
    record = setup.go()
    assert setup.engine.built() == [*ALL, "jax"]
    assert all(record.images[name].build.reused for name in ("base", "cuda-cu13", "pytorch"))
    assert record.images["jax"].push.status == "ok"
    assert not any(image.failed for image in record.images.values())


def test_changed_parent_rebuilds_the_children(setup: Setup) -> None:
    setup.go()
    loaded = load_release(setup.tmp / "project" / "releases" / "26.11.yaml")
    lock = fake_lock(loaded, setup.plan)
    lock.images["base"] = lock.images["base"].model_copy(
        update={"apt": [deb(p.name, "2.0") for p in lock.images["base"].apt]})
    setup.rendered = {i.spec.name: i for i in render_release(loaded, setup.plan, lock)}
    setup.keys = content_keys(loaded, setup.plan, setup.rendered)
    setup.force = True  # every release tag moves to the rebuilt images
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
    setup.gpu_mode = "required"
    run = setup.run()
    calls = len(setup.engine.calls)
    try:
        run_images(run, setup.plan.select(["jax"]))
    finally:
        run.ui.close()
    jax = run.state.record.images["jax"].validation
    assert not jax.reused and jax.gpu_mode == "required"
    assert any(call[0] == "create" for call in setup.engine.calls[calls:])


def _expect_jax_to_fail(setup: Setup) -> None:
    jax = setup.plan.get("jax")
    assert jax.entry is not None
    marked = dataclasses.replace(
        jax, entry=jax.entry.model_copy(update={"expect_failure": "no wheel for this Python"}))
    setup.plan.images[setup.plan.images.index(jax)] = marked


def test_an_expected_failure_is_recorded_but_does_not_break_the_run(setup: Setup) -> None:
    _expect_jax_to_fail(setup)
    setup.engine.fail_build = {"jax"}
    record = setup.go()
    jax = record.images["jax"]
    assert jax.outcome == "xfail" and not jax.breaks_the_run
    assert setup.engine.touched_remote("jax") == []
    assert record.images["pytorch"].outcome == "ok"


def test_a_recorded_expected_failure_is_not_attempted_again(setup: Setup) -> None:
    _expect_jax_to_fail(setup)
    setup.engine.fail_build = {"jax"}
    setup.go()
    calls = len(setup.engine.calls)
    record = setup.go()
    assert setup.engine.calls[calls:] == []
    assert record.images["jax"].outcome == "xfail"
    _bump(setup, "jax", "requirements.txt", b"jax==0.12.1\n")  # new inputs: attempted again
    setup.go()
    assert setup.engine.built().count("jax") == 2


def test_an_unexpected_pass_breaks_the_run(setup: Setup) -> None:
    _expect_jax_to_fail(setup)
    record = setup.go()
    assert record.images["jax"].outcome == "xpass" and record.images["jax"].breaks_the_run


def test_a_fresh_record_adopts_images_built_from_the_same_key(setup: Setup) -> None:
    first = setup.go()
    setup.record = None  # another build dir: no record, same engine
    second = setup.go()
    assert setup.engine.built() == ALL  # nothing built twice
    for name in ALL:
        assert second.images[name].build.reused
    # The parents stayed on the engine; the leaves were dropped once published and are found
    # in the registry by their key.
    for name in ("base", "cuda-cu13"):
        assert second.images[name].build.image_id == first.images[name].build.image_id
    for name in ("pytorch", "jax"):
        assert second.images[name].build.source == "registry"


def test_a_push_that_fails_for_a_moment_is_retried_and_said(setup: Setup) -> None:
    setup.engine.flaky_push = {"jax": 2}
    record = setup.go()
    assert record.images["jax"].push.status == "ok"
    pushes = [call for call in setup.engine.calls_of("push") if call[1].endswith("/jax")]
    assert len(pushes) == 3  # two failed attempts, then the push
    log = (setup.tmp / "logs" / "jax.log").read_text()
    assert log.count("503 Service Unavailable); again in") == 2
