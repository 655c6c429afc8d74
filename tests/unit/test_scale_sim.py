"""The scale model's rules on releases small enough to reckon by hand."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
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
