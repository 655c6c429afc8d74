"""bench/timeline.py: a release record's steps placed on the run's clock."""

from __future__ import annotations

import pytest

from tests.unit.test_scale_sim import _bench_module

timeline = _bench_module("timeline")

pytestmark = pytest.mark.unit


def step(seconds: float, ended: str, reused: bool = False) -> dict[str, object]:
    return {"seconds": seconds, "ended": f"2026-11-27T{ended}Z", "reused": reused}


RECORD = {"started": "2026-11-27T10:00:00Z", "images": {
    "base": {"build": step(10, "10:00:10"), "validation": step(2, "10:00:12"),
             "push": step(8, "10:00:20")},
    "jax": {"build": step(30, "10:00:42"), "validation": step(5, "10:00:47"),
            "push": step(60, "10:01:50")},
    "old": {"build": step(99, "09:00:00", reused=True), "validation": {},
            "push": {"seconds": None}}}}


def test_each_step_starts_its_seconds_before_it_ended_and_reused_ones_are_left_out() -> None:
    steps = timeline.steps_of(RECORD)
    assert [(s.image, s.step, s.start, s.end) for s in steps] == [
        ("base", "build", 0, 10), ("base", "validation", 10, 12), ("base", "push", 12, 20),
        ("jax", "build", 12, 42), ("jax", "validation", 42, 47), ("jax", "push", 50, 110)]


def test_the_chart_names_the_step_that_ends_last() -> None:
    text = timeline.chart(timeline.steps_of(RECORD))
    assert text.splitlines()[-1] == "ends last: jax push at 110 s"
    assert len(text.splitlines()) == 7
