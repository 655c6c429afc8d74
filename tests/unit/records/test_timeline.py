"""records/timeline.py: the last run's steps drawn on one clock, and the critical path found
through each image's parents."""

from __future__ import annotations

import pytest

from ngc_builder.records.record import ImageRecord, ReleaseRecord, Span
from ngc_builder.records.timeline import (
    NAME_WIDTH,
    NO_TIMELINE,
    critical_path,
    render_timeline,
    step_letter,
    timeline_json,
)

pytestmark = pytest.mark.unit
ZERO = 1_795_773_600.0  # 2026-11-27T10:00:00Z


def span(image: str, step: str, start: float, end: float | None,
         worker: str = "MainThread") -> Span:
    return Span(image=image, step=step, start=start, end=end, worker=worker)


def record_of(spans: list[Span], parents: dict[str, str | None] | None = None,
              started: float | None = ZERO) -> ReleaseRecord:
    record = ReleaseRecord(release="26.11", registry="localhost:5000", manifest="m",
                           timeline=spans, timeline_started=started)
    for name, parent in (parents or {}).items():
        record.images[name] = ImageRecord(name=name, kind="image", parent=parent)
    return record


PARENTS: dict[str, str | None] = {"base": None, "cuda": "base", "pytorch": "cuda",
                                  "jax": "cuda", "other": "base"}


def release_run() -> ReleaseRecord:
    """100 s: pytorch waits on cuda (its parent), not on `other`, which ended later."""
    return record_of([
        span("release", "prepare", 0.0, 5.0),
        span("base", "build", 5.2, 20.0, "image_0"),
        span("cuda", "build", 20.1, 50.0, "image_0"),
        span("other", "build", 20.2, 50.4, "image_1"),
        span("pytorch", "build", 50.3, 80.0, "image_0"),
        span("jax", "build", 50.5, 60.0, "image_1"),
        span("pytorch", "validate", 85.0, 95.0, "image_0"),
        span("pytorch", "push", 95.0, 100.0, "image_0"),
    ], PARENTS)


def rows(text: str) -> dict[str, str]:
    """Each drawn row's bar, by its name (the name column cut at NAME_WIDTH)."""
    return {line[:NAME_WIDTH].rstrip(): line.split("|")[1]
            for line in text.splitlines() if line.count("|") == 2}


def links(path: list[Span]) -> list[tuple[str, str]]:
    return [(link.image, link.step) for link in path]


@pytest.mark.parametrize(("step", "letter"), [
    ("build", "b"), ("validate", "v"), ("size", "s"), ("push", "p"), ("promote", "P"),
    ("sign", "P"), ("stage", "P"), ("build linux/arm64", "B"), ("validate linux/arm64", "V"),
    ("cache", "c"), ("os images", "o"), ("other platforms' OS images", "o"),
    ("prepare", "r"), ("lint", "#"), ("builder", "#")])
def test_each_step_has_its_letter(step: str, letter: str) -> None:
    assert step_letter(step) == letter


def test_the_critical_path_follows_parents_not_the_step_that_ended_nearest() -> None:
    # `other` ended at 50.4, later than cuda's 50.0 and within the slack of pytorch's start,
    # but pytorch is not built FROM it; jax (a sibling) ended long before pytorch's validate.
    assert links(critical_path(release_run())) == [
        ("release", "prepare"), ("base", "build"), ("cuda", "build"), ("pytorch", "build"),
        ("pytorch", "validate"), ("pytorch", "push")]


def test_a_link_may_end_up_to_half_a_second_after_the_start_it_held() -> None:
    # Moments are rounded to 0.1 s: a push recorded as starting before its build ended.
    within = record_of([span("base", "build", 0.0, 10.3), span("base", "push", 10.0, 40.0)],
                       {"base": None})
    late = record_of([span("base", "build", 0.0, 10.6), span("base", "push", 10.0, 40.0)],
                     {"base": None})
    assert links(critical_path(within)) == [("base", "build"), ("base", "push")]
    assert links(critical_path(late)) == [("base", "push")]


def test_a_step_the_run_stopped_inside_ends_the_path_at_the_last_moment() -> None:
    record = record_of([span("release", "prepare", 0.0, 2.0),
                        span("base", "build", 2.0, None, "image_0"),
                        span("jax", "build", 2.0, 30.0, "image_1")], {"base": None, "jax": None})
    assert links(critical_path(record)) == [("release", "prepare"), ("base", "build")]
    document = timeline_json(record)
    assert document["total_seconds"] == 30.0
    assert document["critical_path"][-1] == {"image": "base", "step": "build", "start": 2.0,
                                             "end": None, "worker": "image_0", "seconds": 28.0}
    assert document["busy_seconds"] == {"MainThread": 2.0, "image_0": 28.0, "image_1": 28.0}
    text = render_timeline(record)
    assert "   2.0 s  +28.0 s  base     build (the run stopped inside it)" in text.splitlines()


def test_a_cycle_of_parents_in_an_edited_record_still_ends() -> None:
    record = record_of([span("a", "build", 0.0, 5.0), span("b", "build", 5.0, 9.0)],
                       {"a": "b", "b": "a"})
    assert links(critical_path(record)) == [("a", "build"), ("b", "build")]


def test_steps_are_drawn_with_their_letters_in_their_columns() -> None:
    text = render_timeline(release_run(), width=100)  # 100 s over 100 columns: 1 s each
    drawn = rows(text)
    assert drawn["release"] == "r" * 5 + " " * 95
    assert drawn["base"] == " " * 5 + "b" * 15 + " " * 80
    assert drawn["pytorch"] == " " * 50 + "b" * 30 + " " * 5 + "v" * 10 + "p" * 5
    assert drawn["image_1"] == " " * 20 + "b" * 40 + " " * 40
    assert len({len(bar) for bar in drawn.values()}) == 1


def test_the_busy_row_counts_the_steps_running_at_once() -> None:
    record = record_of([span("a", "build", 0.0, 10.0, "image_0"),
                        span("b", "build", 2.0, 6.0, "image_1"),
                        span("c", "build", 4.0, 5.0, "image_2")])
    text = render_timeline(record, width=10)  # one column a second
    assert rows(text)["busy (steps at once)"] == "1122321111"
    gap = record_of([span("a", "build", 0.0, 2.0), span("a", "push", 8.0, 10.0)])
    assert rows(render_timeline(gap, width=10))["busy (steps at once)"] == "11......11"


def test_each_worker_has_a_row_with_what_it_ran_and_its_busy_seconds() -> None:
    text = render_timeline(release_run(), width=100)
    [image_0] = [line for line in text.splitlines() if line.startswith("image_0 ")]
    assert image_0.endswith("|    89.4 s busy")
    assert rows(text)["image_0"] == " " * 5 + "b" * 75 + " " * 5 + "v" * 10 + "p" * 5


def test_the_path_lists_its_links_and_the_waits_between_them() -> None:
    lines = render_timeline(release_run()).splitlines()
    path = lines[lines.index(next(line for line in lines
                                  if line.startswith("critical path:"))):]
    assert path == [
        "critical path: 6 steps, 94.4 s working, 5.0 s waiting",
        "   0.0 s   +5.0 s  release  prepare",
        "   5.2 s  +14.8 s  base     build",
        "  20.1 s  +29.9 s  cuda     build",
        "  50.3 s  +29.7 s  pytorch  build",
        "  80.0 s   +5.0 s  waiting",
        "  85.0 s  +10.0 s  pytorch  validate",
        "  95.0 s   +5.0 s  pytorch  push"]
    assert timeline_json(release_run())["waits"] == [{"start": 80.0, "seconds": 5.0}]


def test_the_header_names_the_length_and_the_start_in_utc() -> None:
    text = render_timeline(release_run())
    assert text.splitlines()[0].startswith("release 26.11: 100.0 s from 2026-11-27T10:00:00Z")
    assert "b build" in text and "B build / V validate of another platform" in text
    unknown = render_timeline(record_of([span("a", "build", 0.0, 1.0)], started=None))
    assert "from an unrecorded moment" in unknown.splitlines()[0]


def test_a_record_from_before_timelines_says_so_in_one_line() -> None:
    record = record_of([])
    assert render_timeline(record) == NO_TIMELINE and "\n" not in NO_TIMELINE
    assert critical_path(record) == []
    assert timeline_json(record) == {
        "release": "26.11", "started": "2026-11-27T10:00:00Z", "total_seconds": 0.0,
        "spans": [], "critical_path": [], "waits": [], "busy_seconds": {}}


def test_a_run_of_no_length_draws_its_steps_in_the_first_column() -> None:
    record = record_of([span("release", "prepare", 0.0, 0.0), span("a", "build", 0.0, 0.0)])
    drawn = rows(render_timeline(record, width=20))
    assert drawn["release"] == "r" + " " * 19
    assert drawn["busy (steps at once)"] == "2" + "." * 19
    assert links(critical_path(record)) == [("release", "prepare"), ("a", "build")]


def test_long_names_are_cut_so_every_bar_starts_in_the_same_column() -> None:
    long_name = "a-framework-with-a-name-much-longer-than-the-column"
    record = record_of([span("release", "prepare", 0.0, 1.0),
                        span(long_name, "build", 1.0, 4.0, "a-worker-thread-with-a-long-name")])
    lines = [line for line in render_timeline(record).splitlines() if line.count("|") == 2]
    assert {line.index("|") for line in lines} == {NAME_WIDTH + 1}
    assert any(line.startswith(long_name[:NAME_WIDTH - 1] + "~ |") for line in lines)


def test_names_from_an_edited_record_come_out_as_printable_ascii() -> None:
    record = record_of([span("py\x1b[31mtorch\n", "bu\u00efld", 0.0, 3.0, "w\u00f6rker")])
    text = render_timeline(record)
    assert all(" " <= char <= "~" for line in text.splitlines() for char in line)
    assert "py?[31mtorch?" in text and "bu?ld" in text and "w?rker" in text


def test_a_step_that_waited_for_a_free_slot_links_to_what_its_worker_ran_before() -> None:
    """mxnet's parent was done at 10 s, but its worker was busy with tensorflow until 50 s:
    that build, not the parent, is what held it."""
    record = record_of([
        span("base", "build", 0.0, 10.0, "image_0"),
        span("tensorflow", "build", 0.0, 50.0, "image_1"),
        span("mxnet", "build", 50.1, 60.0, "image_1"),
    ], {"base": None, "tensorflow": "base", "mxnet": "base"})
    assert links(critical_path(record)) == [("tensorflow", "build"), ("mxnet", "build")]
