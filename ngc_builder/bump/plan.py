"""The bump of a whole release: frameworks first (by their tracks), then each CUDA stack
re-pinned for the frameworks on it; a framework whose newest version makes its stack
unsatisfiable is held back, newest first, before the conflict is given up on.

OS bases never move here (a new Debian is a decision, not a lookup). Rows marked
expect_failure keep their version: the bump only says when a newer one exists. Each row's
extra packages and tools follow its framework (packages.py).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice, product

from ngc_builder.bump.available import VersionIndex
from ngc_builder.bump.packages import PackageChange, bump_packages
from ngc_builder.bump.repin import Ask, Conflict, StackPlan, repin
from ngc_builder.bump.track import Candidate, Row, TrackChoice, choose, on_track
from ngc_builder.errors import StepError
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.models import ImageEntry
from ngc_builder.manifest.wheels import Fetcher, Target

PARALLEL_ROWS = 4  # on a cold cache each examined version is a round trip to the index
MAX_HOLD_ATTEMPTS = 256  # stack re-pins tried while holding rows back (each is cheap)


@dataclass(frozen=True)
class FrameworkChange:
    image: str
    framework: str
    stack: str | None
    old: str
    new: str
    # Why newer versions were not taken ("0.13.0 needs Python >=3.14, base has 3.13"), or
    # what an expect_failure row would have (its version never moves).
    reasons: tuple[str, ...] = ()
    expect_failure: bool = False

    @property
    def changed(self) -> bool:
        return self.old != self.new


@dataclass(frozen=True)
class BumpResult:
    release: str
    frameworks: tuple[FrameworkChange, ...]
    stacks: tuple[StackPlan, ...]
    packages: tuple[PackageChange, ...] = ()  # extra_packages and tools, row by row

    @property
    def conflicts(self) -> list[Conflict]:
        return [c for stack in self.stacks for c in stack.conflicts]

    @property
    def ok(self) -> bool:
        return not self.conflicts


@dataclass
class _Progress:
    """Where a row stands among its acceptable versions while stacks are settled."""

    row: Row
    choice: TrackChoice
    position: int = 0
    hold_reason: str | None = None

    @property
    def candidate(self) -> Candidate:
        return self.choice.candidates[self.position]


def plan_bump(loaded: LoadedRelease, index: VersionIndex, fetch: Fetcher) -> BumpResult:
    rows = {i: _row(loaded, image) for i, image in enumerate(loaded.release.images)}
    movable = [i for i, image in enumerate(loaded.release.images)
               if image.expect_failure is None and rows[i].version_lines]
    with ThreadPoolExecutor(max_workers=PARALLEL_ROWS) as pool:
        choices = list(pool.map(lambda i: choose(rows[i], index, fetch), movable))
    progress = {i: _Progress(rows[i], choice) for i, choice in zip(movable, choices, strict=True)}
    stacks = [_settle_stack(loaded, name, progress, index)
              for name in loaded.release.cuda_stacks]
    changes = [_change(rows[i], progress.get(i), index) for i in rows]
    kept = [i for i, image in enumerate(loaded.release.images) if image.expect_failure is None]
    with ThreadPoolExecutor(max_workers=PARALLEL_ROWS) as pool:
        packages = pool.map(lambda i: bump_packages(rows[i], changes[i].new, index, fetch), kept)
        moved = tuple(change for row in packages for change in row)
    return BumpResult(loaded.release.release, tuple(changes), tuple(stacks), moved)


def _row(loaded: LoadedRelease, image: ImageEntry) -> Row:
    base = loaded.image_base(image)
    stack = loaded.release.cuda_stacks.get(image.stack) if image.stack else None
    return Row(image, loaded.frameworks[image.framework].spec, Target(base.python, base.glibc),
               image.stack, stack)


def _settle_stack(loaded: LoadedRelease, name: str, progress: dict[int, _Progress],
                  index: VersionIndex) -> StackPlan:
    stack = loaded.release.cuda_stacks[name]
    base = loaded.stack_base(name)
    target = Target(base.python, base.glibc)
    mine = {i: p for i, p in progress.items() if p.row.stack_name == name}

    def attempt() -> StackPlan:
        return repin(name, stack, _asks(mine), index, target)

    plan = attempt()
    if plan.conflicts:
        plan = _hold_back(mine, plan, attempt)
    return plan


def _asks(rows: dict[int, _Progress]) -> list[Ask]:
    asks: dict[tuple[str, str], Ask] = {}  # one per row and requirement, whatever the path
    for i, progress in sorted(rows.items()):
        candidate = progress.candidate
        who = progress.row.who(candidate.version)
        for need in candidate.needs:
            key = (str(i), str(need.requirement))
            asks.setdefault(key, Ask(str(i), who, need.requirement))
    return list(asks.values())


def _hold_back(rows: dict[int, _Progress], plan: StackPlan,
               attempt: Callable[[], StackPlan]) -> StackPlan:
    """Step the conflicting rows back, fewest steps in all first (one row one version, then
    one row two versions or two rows one each...), the rows in the order the conflicts name
    them, until the stack fits; two rows whose new versions each conflict with the other's
    current one are held back together. Nothing fits: the first plan stands."""
    owners = list(dict.fromkeys(int(o) for c in plan.conflicts for o in c.owners))
    firsts = {owner: rows[owner].candidate for owner in owners}
    for steps in islice(_by_fewest_steps([rows[o] for o in owners]), MAX_HOLD_ATTEMPTS):
        for owner, step in zip(owners, steps, strict=True):
            rows[owner].position = step
        tried = attempt()
        if not tried.conflicts:
            because = "; ".join(c.message for c in plan.conflicts)
            for owner, step in zip(owners, steps, strict=True):
                if step:
                    rows[owner].hold_reason = (f"{firsts[owner].version} conflicts on stack "
                                               f"{plan.name} ({because})")
            return tried
    for owner in owners:
        rows[owner].position = 0
    return plan


def _by_fewest_steps(rows: list[_Progress]) -> list[tuple[int, ...]]:
    """Every combination of positions but the first, by total steps back, then the earlier
    named row first."""
    ranges = [range(len(row.choice.candidates)) for row in rows]
    combos = [steps for steps in product(*ranges) if any(steps)]
    return sorted(combos, key=lambda steps: (sum(steps), [-step for step in steps]))


def _change(row: Row, progress: _Progress | None, index: VersionIndex) -> FrameworkChange:
    image = row.image
    fields = (image.image_name, image.framework, image.stack, image.version)
    if progress is None:
        return FrameworkChange(*fields, image.version, _unmoved(row, index),
                               expect_failure=image.expect_failure is not None)
    new = progress.candidate.version
    reasons = progress.choice.reasons_above(new)
    if progress.hold_reason:
        reasons.append(progress.hold_reason)
    return FrameworkChange(*fields, new, tuple(reasons))


def _unmoved(row: Row, index: VersionIndex) -> tuple[str, ...]:
    """What a row that never moves would have: a newer version's existence, said once."""
    if not row.version_lines:
        return ("not on the package index (the OS packages it)",)
    try:
        listed = on_track(row, index)
    except StepError as exc:
        return (f"the index did not answer: {exc.message}",)
    newer = [v for v in listed if v != row.image.version]
    return (f"{newer[0]} exists",) if newer else ()
