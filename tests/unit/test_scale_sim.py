"""The scale model's rules on releases small enough to reckon by hand."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from tests.conftest import REPO


def _bench_module(name: str) -> ModuleType:
    """bench/ holds scripts, not a package: load the model from its file."""
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


scale_sim = _bench_module("scale_sim")
ImageWork, SiteModel, simulate = scale_sim.ImageWork, scale_sim.SiteModel, scale_sim.simulate

pytestmark = pytest.mark.unit


def _image(name: str, parent: str | None, build: float, push_bytes: int = 0) -> Any:
    return ImageWork(name, parent, build_s=build, validate_s=0.0, compress_s=0.0,
                     push_bytes=push_bytes)


def test_a_chain_on_one_host_takes_the_sum_of_its_steps() -> None:
    chain = [_image("base", None, 10), _image("cuda", "base", 20)]
    result = simulate(chain, SiteModel(hosts=1, slots=1, cores=1, measured_jobs=1))
    assert result.makespan_s == pytest.approx(30, abs=0.5)


def test_siblings_on_two_machines_run_side_by_side_and_pull_their_parent() -> None:
    release = [_image("base", None, 10, push_bytes=100), _image("a", "base", 40),
               _image("b", "base", 40)]
    one = simulate(release, SiteModel(hosts=1, slots=1, cores=1, measured_jobs=1,
                                      bandwidth=100))
    two = simulate(release, SiteModel(hosts=2, slots=1, cores=1, measured_jobs=1,
                                      bandwidth=100))
    assert one.makespan_s == pytest.approx(91, abs=1)  # 10 + 1 s push + 40 + 40
    assert two.makespan_s == pytest.approx(52, abs=1)  # b waits for the push, pulls 1 s
    assert two.pulls == 1 and two.placement["a"] != two.placement["b"]


def test_two_hosts_on_one_machine_share_its_cores() -> None:
    release = [_image("a", None, 40), _image("b", None, 40)]
    shared = simulate(release, SiteModel(hosts=2, slots=1, cores=1, measured_jobs=1,
                                         machines=1))
    assert shared.makespan_s == pytest.approx(80, abs=1)


# bench/two_hosts.py: what it reads of a real run, and how it feeds the model.
two_hosts = _bench_module("two_hosts")


def test_the_bench_counts_how_the_second_host_got_each_parent(tmp_path: Path) -> None:
    from ngc_builder.pipeline.console import Ui
    from ngc_builder.pipeline.parents import Costs

    stream = io.StringIO()
    ui = Ui(tmp_path, stream=stream)
    ui.plan(["base", "cuda", "jax", "pytensor", "pytorch"])
    pushed, unpushed = Costs(10**8, 2, 26, True, False), Costs(10**9, 60, 50, False, True)
    ui.step("jax", f"on second: {pushed.reason('base')}")  # as pipeline/parents.py says it
    ui.step("jax", f"on second: {unpushed.reason('cuda')}")
    ui.step("pytensor", "on second: cuda is there already (built from its key)")
    ui.step("pytorch", f"on main: {pushed.reason('base')}")  # the first host: not counted
    assert two_hosts.parents_brought(stream.getvalue()) == {
        "pulling": ["base"], "building": ["cuda"], "there": ["cuda"]}


def test_the_bench_feeds_the_model_the_measured_push_as_gzip_plus_upload() -> None:
    from ngc_builder.records.record import ImageRecord, ReleaseRecord

    record = ReleaseRecord(release="26.11", registry="r", manifest="m")
    for name, parent, size in (("base", None, 100), ("cuda", "base", 300)):
        image = ImageRecord(name=name, kind="x", parent=parent)
        image.build.seconds, image.build.size_bytes = 10.0, size
        image.validation.seconds, image.push.seconds = 1.0, 5.0
        record.images[name] = image
    plan = SimpleNamespace(images=[SimpleNamespace(name="base", parent=None),
                                   SimpleNamespace(name="cuda", parent="base")])
    works = two_hosts.works_from(record, SimpleNamespace(plan=plan), bandwidth=100.0)
    cuda = works[1]
    assert cuda.push_bytes == int(200 * two_hosts.COMPRESSION)  # its own layers only
    assert cuda.compress_s + cuda.push_bytes / 100.0 == pytest.approx(5.0)
    one = simulate(works, SiteModel(hosts=1, slots=1, cores=1, bandwidth=100.0,
                                    measured_jobs=1))
    assert one.makespan_s == pytest.approx(2 * (10 + 1 + 5), abs=0.5)  # as measured
