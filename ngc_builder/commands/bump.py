"""`ngc-builder bump MANIFEST --to YY.MM`: next month's release proposed from what the index
holds today (docs/monthly.md). Writes `<YY.MM>.yaml` beside MANIFEST (an edit of it: comments
and order kept) and, unless told not to, its lock (last month's, with what the bump moved
resolved again); prints what moved and why."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.bump.available import MemoIndex, VersionIndex, pip_versions
from ngc_builder.bump.describe import describe, to_json
from ngc_builder.bump.edit import write_edited
from ngc_builder.bump.plan import BumpResult, plan_bump
from ngc_builder.bump.relock import seed_lock
from ngc_builder.bump.report import proposal
from ngc_builder.clock import now
from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.errors import InputError, Problem
from ngc_builder.files import write_atomic
from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.manifest.models import RELEASE_RE
from ngc_builder.manifest.wheels import Fetcher, fetch_metadata

# (the new manifest, the images to lock again) -> `lock`'s exit code
Locker = Callable[[Path, list[str]], int]


@dataclass(frozen=True)
class BumpOptions:
    manifest: Path
    to: str  # YY.MM of the new release
    report: Path | None = None  # the proposal in Markdown (a merge request's description)
    force: bool = False  # replace an existing <YY.MM>.yaml
    lock: bool = True
    as_json: bool = False


def bump_command(options: BumpOptions, locker: Locker | None = None,
                 index: VersionIndex = pip_versions, fetch: Fetcher = fetch_metadata) -> int:
    loaded = load_release(options.manifest)
    target = target_path(options, loaded.release.release)
    result = plan_bump(loaded, MemoIndex(index), fetch)
    lines = describe(result)
    if options.report is not None:
        write_atomic(options.report, proposal(result, lines, options.manifest, options.to, now()))
    show(result, lines, options.as_json)
    if not result.ok:
        print(f"bump: no consistent {options.to}: {len(result.conflicts)} conflict(s); "
              "nothing written", file=sys.stderr)
        return EXIT_FAILED
    write_bumped(loaded, result, options, target)
    print(f"wrote {target}", file=sys.stderr)
    if not options.lock or locker is None:
        return EXIT_OK
    moved = seed_lock(options.manifest, target, options.to)
    if not moved:
        print("lock: nothing the bump moved needs resolving again", file=sys.stderr)
        return EXIT_OK
    return locker(target, moved)


def target_path(options: BumpOptions, current: str) -> Path:
    """`<YY.MM>.yaml` beside the manifest, for a release id after the current one."""
    where = str(options.manifest)
    if not RELEASE_RE.fullmatch(options.to):
        raise InputError([Problem(where, 1, "--to", f"{options.to!r} is not a release id "
                                                    "(YY.MM)")])
    if options.to <= current:
        raise InputError([Problem(where, 1, "--to", f"{options.to} is not after {current}")])
    target = options.manifest.with_name(f"{options.to}.yaml")
    if target.exists() and not options.force:
        raise InputError([Problem(str(target), 1, "--to", "exists already (--force replaces "
                                                           "it)")])
    return target


def write_bumped(loaded: LoadedRelease, result: BumpResult, options: BumpOptions,
                 target: Path) -> None:
    rows = {entry.image_name: row for row, entry in enumerate(loaded.release.images)}
    versions = {rows[change.image]: change.new for change in result.frameworks
                if change.changed}
    stacks = {plan.name: {c.wheel: c.new for c in plan.changes} for plan in result.stacks}
    cuda = {plan.name: plan.cuda_new for plan in result.stacks
            if plan.cuda_new != plan.cuda_old}
    packages: dict[int, dict[str, dict[str, str]]] = {}
    for change in (c for c in result.packages if c.changed):
        packages.setdefault(rows[change.image], {}).setdefault(change.field, {})[change.name] = \
            change.new
    write_edited(options.manifest, target, options.to, versions, stacks, cuda, packages)


def show(result: BumpResult, lines: list[str], as_json: bool) -> None:
    if as_json:
        print(to_json(result))
        return
    for line in lines:
        print(line)
