"""`ngc-builder rebuild YY.MM`: an earlier release again, from its archived manifest and the
project files of the revision it was built from (a git worktree), to the same tags. Release
tags are moved on purpose (forced), and every digest that changed is noted in the archive."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.assemble import packages
from ngc_builder.clock import now
from ngc_builder.commands.release import ReleaseOptions, release_command
from ngc_builder.errors import InputError, Problem
from ngc_builder.pipeline.run import RunPolicy
from ngc_builder.records import archive
from ngc_builder.records.evidence import evidence_file
from ngc_builder.records.notes import image_diff
from ngc_builder.records.record import ReleaseRecord, load_record, record_path


@dataclass(frozen=True)
class RebuildOptions:
    release: str  # YY.MM of an archived release
    archive_dir: Path = Path("archive")
    root: Path | None = None
    registry: str | None = None
    build_dir: Path = Path("build")
    # Every layer built again: neither the registry's images nor the engine's cache reused.
    # The same inputs then give the archived digests (docs/reproducible.md).
    fresh: bool = False
    jobs: int = 2
    as_json: bool = False


Checkout = Callable[[Path, "str | None", Path], Path]  # root, revision, target -> tree


def rebuild_command(options: RebuildOptions,
                    release_run: Callable[[ReleaseOptions], int] = release_command,
                    checkout: Checkout | None = None, clock: Callable[[], str] = now) -> int:
    """`release_run`, `checkout`, `clock`: the release run, the git worktree and the time
    (tests hand in their own)."""
    release, archive_dir = options.release, options.archive_dir
    archived = archive.load(archive_dir, release)
    if archived is None:
        raise InputError([Problem(str(archive.release_dir(archive_dir, release)), 1,
                                  "(archive)", f"release {release} was never archived "
                                  "(`ngc-builder report` archives a release)")])
    manifest = (archive.release_dir(archive_dir, release) / archive.MANIFEST_NAME).resolve()
    root = (options.root or Path.cwd()).resolve()
    with tempfile.TemporaryDirectory(prefix=f"ngc-rebuild-{release}-") as scratch:
        tree = (checkout or checkout_revision)(root, archived.revision, Path(scratch) / "tree")
        policy = RunPolicy(force=True, jobs=options.jobs, reuse_published=not options.fresh,
                           no_cache=options.fresh)
        code = release_run(ReleaseOptions(
            manifest=manifest, root=tree, registry=options.registry, policy=policy,
            build_dir=options.build_dir / f"rebuild-{release}", as_json=options.as_json))
        _forget(root, tree)
    check = _note_moves(options, archived, clock)
    if code == 0 and check is not None and check.differences:
        return 1  # built, but not the package sets that were archived
    return code


def _note_moves(options: RebuildOptions, archived: archive.ArchivedRelease,
                clock: Callable[[], str]) -> archive.PackageCheck | None:
    """Every image whose digest the rebuild changed, and the package sets against the
    archived ones, noted in the archive and printed."""
    release, archive_dir = options.release, options.archive_dir
    record_file = record_path(options.build_dir / f"rebuild-{release}", release)
    record = load_record(record_file)
    if record is None:
        return None
    moves = [{"image": name, "old": archived.images[name].digest or "",
              "new": image.push.digest or "", "at": clock()}
             for name, image in record.images.items()
             if name in archived.images and image.push.digest
             and image.push.digest != archived.images[name].digest]
    check = package_check(options.archive_dir, record, record_file, clock())
    archive.note_rebuild(archive_dir, release, moves, check)
    for move in moves:
        print(f"{move['image']}: {move['old']} -> {move['new']}")
    print(f"packages: {len(check.images)} images against archive {release}: "
          + ("identical" if not check.differences else "DIFFERENT"))
    for line in check.differences:
        print(line)
    return check


def package_check(archive_dir: Path, record: ReleaseRecord, record_file: Path,
                  at: str) -> archive.PackageCheck:
    """Each rebuilt image's pip and dpkg packages against its archived manifest."""
    compared, differences = [], []
    for name, image in record.images.items():
        archived = archive.packages_of(archive_dir, record.release, name)
        rebuilt = evidence_file(record_file.parent, image.build.packages, record_file,
                                f"images.{name}.build.packages")
        if archived is None or rebuilt is None:
            continue
        compared.append(name)
        differences += image_diff(name, packages.load(archived), packages.load(rebuilt))
    return archive.PackageCheck(at=at, images=compared, differences=differences)


def checkout_revision(root: Path, revision: str | None, target: Path) -> Path:
    """The project files as they were at ``revision``, else (with a warning) as they are."""
    commit = (revision or "").removesuffix("-dirty")
    top = _git(root, "rev-parse", "--show-toplevel")
    if not commit or top is None or _git(root, "cat-file", "-e", f"{commit}^{{commit}}") is None:
        print(f"rebuild: revision {revision!r} not in this repository; using the current "
              "project files", file=sys.stderr)
        return root
    if _git(root, "worktree", "add", "--detach", str(target), commit) is None:
        raise InputError([Problem(str(root), 1, "revision", f"cannot check out {commit}")])
    return target / root.relative_to(top)


def _forget(root: Path, tree: Path) -> None:
    if tree != root:
        _git(root, "worktree", "prune")


def _git(root: Path, *args: str) -> str | None:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() if done.returncode == 0 else None
