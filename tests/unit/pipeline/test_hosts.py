"""Several build hosts: placement (affinity, per-host slots, least-loaded), the pull-or-build
rule for a parent on another host, and a release over two fake engines sharing one registry."""

from __future__ import annotations

import io
import threading
import time

import pytest

from ngc_builder.pipeline import parents
from ngc_builder.pipeline.console import Ui, summary_line
from ngc_builder.pipeline.hosts import BuildHost, BuildHosts
from ngc_builder.pipeline.parents import Costs
from ngc_builder.pipeline.release import run_images
from ngc_builder.pipeline.run import Run, RunInputs, RunPolicy, RunServices, RunState
from ngc_builder.pipeline.schedule import Ready, by_weight, choose_host, schedule
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.record import ReleaseRecord
from tests.unit.fake_engine import OS_ID, REGISTRY, FakeClient, FakeEngine, Setup

pytestmark = pytest.mark.unit
GB = 1_000_000_000


def test_a_child_goes_to_its_parents_host_while_that_has_a_slot() -> None:
    assert choose_host({"a": 2, "b": 2}, {"a": 1, "b": 0}, preferred="a") == "a"


def test_a_full_parent_host_sends_the_child_to_the_least_loaded_host() -> None:
    slots = {"a": 1, "b": 4, "c": 2}
    assert choose_host(slots, {"a": 1, "b": 2, "c": 0}, preferred="a") == "c"
    assert choose_host(slots, {"a": 1, "b": 1, "c": 1}, preferred="a") == "b"  # 1/4 < 1/2


def test_no_free_slot_anywhere_places_nothing() -> None:
    assert choose_host({"a": 1, "b": 1}, {"a": 1, "b": 1}, preferred=None) is None


def test_ties_go_to_the_first_listed_host() -> None:
    assert choose_host({"a": 1, "b": 1}, {}, preferred=None) == "a"


def _spec(setup: Setup, name: str) -> ImageSpec:
    return setup.plan.get(name)


def test_the_scheduler_keeps_each_host_within_its_slots(setup: Setup) -> None:
    running: dict[str, int] = {"a": 0, "b": 0}
    most: dict[str, int] = {"a": 0, "b": 0}
    placed: dict[str, str] = {}
    guard = threading.Lock()

    def work(spec: ImageSpec, ready: Ready) -> None:
        with guard:
            running[placed[spec.name]] += 1
            most[placed[spec.name]] = max(most[placed[spec.name]], running[placed[spec.name]])
        time.sleep(0.05)
        ready()
        with guard:
            running[placed[spec.name]] -= 1

    images = setup.plan.select([])
    schedule(images, work, jobs=9, slots={"a": 1, "b": 1}, place=placed.__setitem__)
    assert sorted(placed) == sorted(spec.name for spec in images)
    assert most == {"a": 1, "b": 1}  # siblings (pytorch, jax) ran side by side, one per host
    assert {placed["pytorch"], placed["jax"]} == {"a", "b"}


def test_an_earlier_runs_host_draws_the_children_there(setup: Setup) -> None:
    placed: dict[str, str] = {}
    images = [spec for spec in setup.plan.select([]) if spec.name in ("pytorch", "jax")]
    schedule(images, lambda spec, ready: None, jobs=1, slots={"a": 4, "b": 4},
             place=placed.__setitem__, homes={"cuda-cu13": "b"})
    assert placed == {"pytorch": "b", "jax": "b"}


@pytest.mark.parametrize(("costs", "choice", "said"), [
    (Costs(GB, 20.0, 158.0, pushed=True, pushing=False), "pull",
     "pulling base (1.00 GB, pushed) rather than building it (158 s, then ~20 s to push its "
     "layers again)"),
    # Pushed already: a rebuild also pushes its layers again, so pulling always wins.
    (Costs(GB, 20.0, 12.0, pushed=True, pushing=False), "pull",
     "pulling base (1.00 GB, pushed) rather than building it (12 s, then ~20 s to push its "
     "layers again)"),
    (Costs(GB, 20.0, 10.0, pushed=False, pushing=True), "build",
     "building base (10 s, then ~20 s to push its layers again) rather than waiting for its "
     "push and pulling it (1.00 GB, ~20 s)"),
    (Costs(GB, 20.0, 30.0, pushed=False, pushing=True), "pull",
     "pulling base (1.00 GB, push under way: waiting for it) rather than building it (30 s, "
     "then ~20 s to push its layers again)"),
    (Costs(GB, 20.0, None, pushed=True, pushing=False), "pull",
     "pulling base (1.00 GB, pushed) rather than building it (?, then ~20 s to push its "
     "layers again)"),
    (Costs(GB, 1.0, 500.0, pushed=False, pushing=False), "build",
     "building base (500 s): no push of it to pull"),
])
def test_the_cheaper_way_brings_a_parent_and_says_why(costs: Costs, choice: str,
                                                      said: str) -> None:
    assert costs.choice() == choice
    assert costs.reason("base") == said


def _sharing_registry(engine: FakeEngine) -> FakeEngine:
    """Another host's engine: its own images, the same registry."""
    return FakeEngine(registry=engine.registry, pushed_images=engine.pushed_images)


def _two_host_run(setup: Setup, second: FakeEngine, record: ReleaseRecord | None = None) -> Run:
    hosts = BuildHosts([BuildHost("a", FakeClient(setup.engine), jobs=1, gpu_mode="none"),
                        BuildHost("b", FakeClient(second), jobs=1, gpu_mode="required")])
    ui = Ui(setup.tmp / "logs", show_logs=False, stream=io.StringIO())
    inputs = RunInputs(plan=setup.plan, rendered=setup.rendered, keys=setup.keys,
                       context_dir=setup.tmp / "context", report_dir=setup.tmp / "reports",
                       os_image_ids={"debian-trixie": OS_ID}, revision="0123abc",
                       source="https://example.invalid/ngc")
    record = record or ReleaseRecord(release="26.11", registry=REGISTRY, manifest="26.11.yaml")
    return Run(inputs, RunPolicy(jobs=1), RunServices(hosts.hosts[0].engine, ui, hosts),
               RunState(record, setup.tmp / "release.json"))


def test_a_parent_still_being_pushed_is_built_on_the_childs_host(setup: Setup) -> None:
    second = _sharing_registry(setup.engine)
    setup.engine.hold_push = {"base": "cuda-cu13"}  # base's push waits for cuda-cu13's build
    run = _two_host_run(setup, second)
    try:
        run_images(run, setup.plan.select(["cuda-cu13"]))
    finally:
        run.ui.close()
    images = run.state.record.images
    assert (images["base"].build.host, images["cuda-cu13"].build.host) == ("a", "b")
    assert second.built() == ["base", "cuda-cu13"]  # base again, there, then its child
    assert second.calls_of("pull") == []
    assert images["cuda-cu13"].validation.gpu_mode == "required"  # host b's mode
    assert images["base"].validation.gpu_mode == "none"
    assert all(image.push.status == "ok" for image in images.values())
    assert summary_line(images["cuda-cu13"]).startswith("cuda-cu13 on b: built")


def test_a_pushed_parent_slow_to_build_is_pulled_onto_the_childs_host(setup: Setup) -> None:
    setup.go(only=["base"])  # base built and pushed on host a
    assert setup.record is not None
    base = setup.record.images["base"]
    base.build.host, base.build.seconds, base.build.size_bytes = "a", 500.0, GB
    second = _sharing_registry(setup.engine)
    run = _two_host_run(setup, second, setup.record)
    run.state.published("base").set()
    run.hosts.place("cuda-cu13", "b")
    image_id = parents.parent_image(run, _spec(setup, "cuda-cu13"))
    assert image_id is not None and image_id in second.images
    assert [call[1].rpartition("@")[2] for call in second.calls_of("pull")] == [base.push.digest]
    assert second.built() == []
    assert run.hosts.copy_on("b", "base") == image_id
    assert base.build.image_id != image_id or base.build.host == "a"  # its record stays a's
    run.ui.close()


def test_of_several_ready_images_the_one_more_work_waits_on_starts_first() -> None:
    """cuda-cu11 comes first in the manifest, but only one expected failure stands on it;
    pytorch and its devel image, on two platforms, stand on cuda-cu13."""
    both = ("linux/amd64", "linux/arm64")
    images = [ImageSpec("base", "base", None, "26.12", "debian-trixie", platforms=both),
              ImageSpec("cuda-cu11", "cuda", "base", "26.12", "debian-trixie"),
              ImageSpec("cuda-cu13", "cuda", "base", "26.12", "debian-trixie", platforms=both),
              ImageSpec("mxnet", "framework", "cuda-cu11", "26.12", "debian-trixie"),
              ImageSpec("pytorch", "framework", "cuda-cu13", "26.12", "debian-trixie",
                        platforms=both)]
    started: list[str] = []
    schedule(images, lambda spec, ready: started.append(spec.name), jobs=1)
    # cuda-cu11 (itself and mxnet) weighs as much as pytorch (two platforms): the manifest's
    # order; mxnet, one platform, comes last.
    assert started == ["base", "cuda-cu13", "cuda-cu11", "pytorch", "mxnet"]
    assert [spec.name for spec in by_weight(images)] == started
