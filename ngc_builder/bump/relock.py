"""The new release's lock, started from last month's: the OS bases stay as they were locked
(a bump never moves them), and only the images the bump changed are resolved again, with
every image built on one of them."""

from __future__ import annotations

from pathlib import Path

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import write_atomic
from ngc_builder.lock.inputs import stale_problems
from ngc_builder.lock.models import dump_lock, load_lock, lock_path
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release


def seed_lock(previous: Path, bumped: Path, release: str) -> list[str]:
    """Last month's lock beside the new manifest, as the new release's; the images to lock
    again (the ones whose inputs moved, and everything above them), parents first."""
    old = load_lock(lock_path(previous))
    if old is None:
        raise InputError([Problem(str(lock_path(previous)), 1, "lock",
                                  "no lock to start from: run `ngc-builder lock` on it first")])
    write_atomic(lock_path(bumped), dump_lock(old.model_copy(update={"release": release})))
    loaded = load_release(bumped)
    plan = plan_release(loaded)
    seeded = load_lock(lock_path(bumped))
    moved = {_image_of(problem.field, [spec.name for spec in plan.images])
             for problem in stale_problems(loaded, plan, seeded, lock_path(bumped))
             if problem.field.startswith("images.")}
    for spec in plan.images:  # parents come first: a moved parent moves its children
        if spec.parent in moved:
            moved.add(spec.name)
    return [spec.name for spec in plan.images if spec.name in moved]


def _image_of(field: str, names: list[str]) -> str:
    """The image a lock field names: `images.jax` and `images.jax.error` both name jax (a
    name may hold a '.' itself, so the release's own names decide where it ends)."""
    rest = field.removeprefix("images.")
    found = [name for name in names if rest == name or rest.startswith(name + ".")]
    return max(found, key=len, default=rest)
