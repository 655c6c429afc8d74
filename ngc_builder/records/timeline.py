"""The last run's steps on one clock (`report --timeline`): what ran when and on which worker
thread, how many steps ran at once, and the chain of steps that held the release's end.

Pure functions over a ReleaseRecord; the text is plain ASCII (a terminal, or pasted into a
Markdown code block), every name from the record printed as printable ASCII only.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ngc_builder.records.record import ReleaseRecord, Span

RELEASE = "release"  # the image name of the run's own steps (prepare, cache, OS images)
# A step that starts this soon after another ended was waiting for it: the record rounds its
# moments to 0.1 s, and a worker takes a moment to pick up what a finished step unblocked.
LINK_SLACK = 0.5
WAIT_SHOWN = 1.0  # shorter gaps between links of the critical path are hand-overs, not waits
NAME_WIDTH = 22  # the row-name column: longer names are cut, so every bar starts in line
NO_TIMELINE = ("no timeline in this record: it was written before runs recorded their steps "
               "(a new `ngc-builder release` run records one)")
LEGEND = ("legend: b build  v validate  s size  p push  P promote/sign/stage  c cache  "
          "o OS images  r prepare\n"
          "        B build / V validate of another platform  # any other step")
_LETTERS = {"build": "b", "validate": "v", "size": "s", "push": "p", "promote": "P",
            "sign": "P", "stage": "P", "cache": "c", "os images": "o", "prepare": "r"}


def step_letter(step: str) -> str:
    """The letter a step is drawn with (LEGEND)."""
    if step in _LETTERS:
        return _LETTERS[step]
    kind, _, platform = step.partition(" ")
    if kind in ("build", "validate") and platform:  # `build linux/arm64`
        return kind[0].upper()
    return "o" if step.lower().endswith("os images") else "#"


def last_moment(record: ReleaseRecord) -> float:
    """The last moment the timeline knows of: where a step the run stopped inside ends."""
    moments = [moment for span in record.timeline for moment in (span.start, span.end)
               if moment is not None]
    return max(moments, default=0.0)


def span_end(span: Span, last: float) -> float:
    return last if span.end is None else span.end


def critical_path(record: ReleaseRecord) -> list[Span]:
    """The chain of steps that held the release's end, in time order: from the step that
    ended last back through what each one waited for (`_waited_for`)."""
    if not record.timeline:
        return []
    last = last_moment(record)
    link = _ended_last(record.timeline, last)
    chain: list[Span] = []
    while link is not None:
        chain.append(link)
        link = _waited_for(record, link, chain, last)
    return chain[::-1]


def _waited_for(record: ReleaseRecord, span: Span, chain: list[Span],
                last: float) -> Span | None:
    """What `span` waited for: of the steps of its image, its ancestors' and the run's own,
    and the steps its worker ran before it (it waited for a free slot), the one that ended
    last by the time it started. Steps already on the chain are left out, so steps of no
    length at one moment cannot send it round in a loop."""
    lineage = _lineage(record, span.image)
    candidates = [other for other in record.timeline
                  if (other.image in lineage or (span.worker and other.worker == span.worker))
                  and all(other is not link for link in chain)
                  and other.start <= span.start
                  and span_end(other, last) <= span.start + LINK_SLACK]
    return _ended_last(candidates, last)


def _ended_last(spans: list[Span], last: float) -> Span | None:
    """The step that ended last. Of several: one the run stopped inside (what it was doing at
    the end), then the one that started last (the most direct link), then the last recorded."""
    ranked = [(span_end(span, last), span.end is None, span.start, position, span)
              for position, span in enumerate(spans)]
    return max(ranked, key=lambda entry: entry[:4])[4] if ranked else None


def _lineage(record: ReleaseRecord, image: str) -> set[str]:
    """`image`, the images it is built FROM (up to its base layer) and the run itself."""
    lineage = {image, RELEASE}
    entry = record.images.get(image)
    while entry is not None and entry.parent is not None and entry.parent not in lineage:
        lineage.add(entry.parent)  # a hand-edited cycle of parents stops at the repeat
        entry = record.images.get(entry.parent)
    return lineage


@dataclass(frozen=True)
class Wait:
    """A gap between two links of the critical path: the next one could not start yet."""

    start: float
    seconds: float


def waits(chain: list[Span], last: float) -> list[Wait]:
    """The gaps longer than WAIT_SHOWN before links of the chain."""
    return [wait for wait in _waits_before(chain, last) if wait is not None]


def _waits_before(chain: list[Span], last: float) -> list[Wait | None]:
    """Per link, the wait before it (from the run's zero for the first), if one is shown."""
    found: list[Wait | None] = []
    previous_end = 0.0
    for link in chain:
        gap = link.start - previous_end
        found.append(Wait(previous_end, gap) if gap > WAIT_SHOWN else None)
        previous_end = span_end(link, last)
    return found


def busy_seconds(spans: Iterable[Span], last: float) -> float:
    return sum(span_end(span, last) - span.start for span in spans)


def worker_name(span: Span) -> str:
    return span.worker or "(unknown)"  # a span recorded without its thread


def _grouped(spans: list[Span], key: str) -> dict[str, list[Span]]:
    """Spans by image or by worker, in the order each first started."""
    groups: dict[str, list[Span]] = {}
    for span in spans:
        name = span.image if key == "image" else worker_name(span)
        groups.setdefault(name, []).append(span)
    return groups


def started_at(record: ReleaseRecord) -> str | None:
    """The run's zero as UTC ISO 8601, if the record has it."""
    if record.timeline_started is None:
        return None
    moment = dt.datetime.fromtimestamp(record.timeline_started, tz=dt.UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def timeline_json(record: ReleaseRecord) -> dict[str, Any]:
    """`report --timeline --json`: the spans, the critical path and its waits, the run's
    length and each worker's busy seconds (a step the run stopped inside counts to the
    last moment known)."""
    last = last_moment(record)
    chain = critical_path(record)
    return {
        "release": record.release,
        "started": started_at(record),
        "total_seconds": round(last, 1),
        "spans": [span.model_dump() for span in record.timeline],
        "critical_path": [{**link.model_dump(), "seconds": round(busy_seconds([link], last), 1)}
                          for link in chain],
        "waits": [{"start": round(wait.start, 1), "seconds": round(wait.seconds, 1)}
                  for wait in waits(chain, last)],
        "busy_seconds": {worker: round(busy_seconds(spans, last), 1)
                         for worker, spans in _grouped(record.timeline, "worker").items()},
    }


@dataclass(frozen=True)
class Axis:
    """`width` columns over the run's length: column i holds [i, i + 1) * length / width."""

    length: float
    width: int

    def column(self, moment: float) -> int:
        return min(self.width - 1, max(0, int(moment / self.length * self.width)))

    def columns(self, span: Span, last: float) -> range:
        """The columns a step's bar covers: at least one, so a short step still shows."""
        first = self.column(span.start)
        through = math.ceil(span_end(span, last) / self.length * self.width) - 1
        return range(first, max(first, min(self.width - 1, through)) + 1)

    def moment(self, column: int) -> float:
        return column * self.length / self.width


def render_timeline(record: ReleaseRecord, width: int = 100) -> str:
    """The timeline as text: a row per image and per worker, how many steps ran at once, and
    the critical path with its waits."""
    if not record.timeline:
        return NO_TIMELINE
    last = last_moment(record)
    # A run of no length still draws its steps, all in the first column.
    axis = Axis(max(last, 1e-9), max(width, 10))
    lines = [_header(record, last, axis), LEGEND, "", _scale("images", axis)]
    lines += _rows(_grouped(record.timeline, "image"), axis, last)
    lines += ["", _scale("workers", axis)]
    lines += _rows(_grouped(record.timeline, "worker"), axis, last)
    lines += ["", _row_line("busy (steps at once)", _busy_bar(record.timeline, axis, last),
                            "(+ is 10 or more)")]
    return "\n".join([*lines, "", *_path_lines(critical_path(record), last)])


def _header(record: ReleaseRecord, last: float, axis: Axis) -> str:
    started = started_at(record) or "an unrecorded moment"
    return (f"release {printable(record.release)}: {last:.1f} s from {started} "
            f"(one column = {axis.length / axis.width:.2f} s)")


def _scale(title: str, axis: Axis) -> str:
    end = f"{axis.length:.1f} s" if axis.length >= 0.05 else "0.0 s"
    return f"{title:<{NAME_WIDTH}}  0 s{end:>{axis.width - 3}}"


def _rows(groups: dict[str, list[Span]], axis: Axis, last: float) -> list[str]:
    return [_row_line(name, _bar(spans, axis, last), f"{busy_seconds(spans, last):7.1f} s busy")
            for name, spans in groups.items()]


def _row_line(name: str, bar: str, note: str) -> str:
    return f"{_cut(printable(name)):<{NAME_WIDTH}} |{bar}| {note}"


def _bar(spans: list[Span], axis: Axis, last: float) -> str:
    """Each step drawn with its letter over its columns (a later step over an earlier one
    sharing a column)."""
    cells = [" "] * axis.width
    for span in spans:
        for column in axis.columns(span, last):
            cells[column] = step_letter(span.step)
    return "".join(cells)


def _busy_bar(spans: list[Span], axis: Axis, last: float) -> str:
    """Per column, the most steps running at one moment in it ('.' for none): the most is
    reached at the column's start or where a step drawn from this column starts."""
    firsts: dict[int, list[float]] = {}
    for span in spans:
        firsts.setdefault(axis.column(span.start), []).append(span.start)
    return "".join(_count_cell(max(_running(spans, moment, last)
                                   for moment in [axis.moment(column), *firsts.get(column, [])]))
                   for column in range(axis.width))


def _running(spans: list[Span], moment: float, last: float) -> int:
    """Steps running at `moment`: a step of no length runs at its start."""
    return sum(1 for span in spans
               if span.start == moment or span.start <= moment < span_end(span, last))


def _count_cell(count: int) -> str:
    return "." if count == 0 else str(count) if count < 10 else "+"


def _path_lines(chain: list[Span], last: float) -> list[str]:
    """The critical path, a line per link and per wait before one, in time order."""
    before = _waits_before(chain, last)
    waited = sum(wait.seconds for wait in before if wait is not None)
    lines = [f"critical path: {len(chain)} steps, {busy_seconds(chain, last):.1f} s working, "
             f"{waited:.1f} s waiting"]
    names = max(len(_cut(printable(link.image))) for link in chain)
    for link, wait in zip(chain, before, strict=True):
        if wait is not None:
            lines.append(_path_line(wait.start, wait.seconds, "waiting", ""))
        step = printable(link.step) + (" (the run stopped inside it)" if link.end is None else "")
        lines.append(_path_line(link.start, busy_seconds([link], last),
                                f"{_cut(printable(link.image)):<{names}}", step))
    return lines


def _path_line(start: float, seconds: float, image: str, step: str) -> str:
    return f"{start:6.1f} s {'+' + format(seconds, '.1f'):>6} s  {image}  {step}".rstrip()


def _cut(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[:NAME_WIDTH - 1] + "~"


def printable(text: str) -> str:
    """`text` as printable ASCII: a hand-edited record cannot break a row or send a
    terminal an escape sequence."""
    return "".join(char if " " <= char <= "~" else "?" for char in text)
