"""`ngc-builder lock MANIFEST`: resolve every image's packages (Python closure for its own
target, Debian packages in its own OS) and write `<manifest>.lock.json` beside the manifest."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ngc_builder.assemble.osbase import (
    Strategy,
    ensure_os_image,
    locked_bootstrap,
    obtain_os_image,
)
from ngc_builder.assemble.osrepro import locked_os_packages, os_packages
from ngc_builder.cache.fetch import fetch_debs
from ngc_builder.cache.fill import by_mirror
from ngc_builder.cache.store import default_root, open_cache
from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.errors import InputError, Problem, StepError
from ngc_builder.files import write_atomic
from ngc_builder.lock.diff import platform_changes, release_changes, summary
from ngc_builder.lock.inputs import with_locked_os
from ngc_builder.lock.models import (
    AptPackage,
    ImageLock,
    OsLock,
    PlatformLock,
    ReleaseLock,
    dump_lock,
    load_lock,
    lock_path,
)
from ngc_builder.lock.platforms import engine_apt, lock_platforms, platform_errors
from ngc_builder.lock.resolve import lock_release, unexpected_errors
from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.plan.dag import ReleasePlan, plan_release
from ngc_builder.services.engine import Engine, connect, image_exists


@dataclass(frozen=True)
class LockOptions:
    manifest: Path
    root: Path | None = None
    os_strategy: Strategy = "auto"
    stack_check: bool = True
    as_json: bool = False
    only: tuple[str, ...] = ()  # re-resolve these images, keep the rest of the lock


def lock_command(options: LockOptions, engine: Engine | None = None) -> int:
    """`engine`: where the OS images are (default: the local engine)."""
    loaded = load_release(options.manifest, options.root)
    if options.stack_check:
        check_stacks(loaded)
    plan = plan_release(loaded)
    path = lock_path(loaded.manifest)
    previous = _previous(path)
    kept = _kept(plan, previous, options.only, path)
    engine = engine or connect()
    _ensure_os_images(engine, loaded, plan, options.os_strategy)
    if options.only and previous is not None:
        plan = _on_locked_os(engine, loaded, plan, previous, path)
    lock = lock_release(loaded, plan, engine, _note, kept)
    lock = lock.model_copy(update={"os": _lock_os(engine, loaded, plan, previous, options.only)})
    lock = lock.model_copy(update={"platforms": lock_platforms(
        loaded, plan, lock, engine_apt(loaded, plan, engine, _note), _note,
        kept=_kept_platforms(previous, kept, options.only))})
    failures = unexpected_errors(plan, lock) + platform_errors(plan, lock)
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    if failures:
        return EXIT_FAILED  # the old lock stays: a half-resolved release cannot be built
    write_atomic(path, dump_lock(lock))
    moved = platform_changes(previous, lock)
    _report(path, lock, release_changes(previous, lock), options.as_json, moved)
    if not options.as_json:
        _report_platforms(lock, moved)
    return EXIT_OK


def _note(text: str) -> None:
    print(f"lock: {text}", file=sys.stderr)


def _ensure_os_images(engine: Engine, loaded: LoadedRelease, plan: ReleasePlan,
                      strategy: Strategy) -> None:
    for base_name, ref in sorted(plan.os_refs.items()):
        ensure_os_image(engine, loaded.bases[base_name], ref, strategy, _note)


def _on_locked_os(engine: Engine, loaded: LoadedRelease, plan: ReleasePlan,
                  previous: ReleaseLock, path: Path) -> ReleasePlan:
    """--only keeps the OS lock, so it resolves in the OS images made from that lock (a
    release makes them, and so does this where the cache holds their .debs): apt then locks,
    in the new layer, what it upgrades of the OS (a newer libc6 that libc6-dev asks for).
    Without them, in the engine's OS images, if those hold what the lock holds."""
    locked = with_locked_os(plan, previous)
    for name, ref in sorted(locked.os_refs.items()):
        if name in previous.os and not image_exists(engine, ref):
            _make_locked_os(engine, loaded, name, ref, previous.os[name])
    if all(image_exists(engine, ref) for ref in locked.os_refs.values()):
        return locked
    _require_locked_os(engine, plan, previous, path)
    return plan


def _make_locked_os(engine: Engine, loaded: LoadedRelease, name: str, ref: str,
                    entry: OsLock) -> None:
    """The OS image from the lock's .debs, as a release makes it (a machine that never
    released this lock, or pruned its OS images, has none): those the package cache lacks are
    fetched first, hash-checked, from the base's mirror. Where one cannot be had (the mirror
    dropped that version) it is not made here: the drift check then decides."""
    try:
        cache = open_cache(default_root())
        for mirror, debs in by_mirror(loaded, name, cache.missing_debs(entry.apt)).items():
            fetch_debs(cache, mirror, debs, _note)
        _note(f"making {ref} from the OS lock's .debs in the cache")
        obtain_os_image(engine, loaded.bases[name], ref, "bootstrap", _note,
                        locked=locked_bootstrap(entry, cache.deb_path))
    except (StepError, InputError, OSError) as exc:
        _note(f"{ref}: could not be made from the lock: {_why_not(exc)}")


def _why_not(exc: Exception) -> str:
    if isinstance(exc, StepError):
        return f"{exc.step}: {exc.message}"
    return str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__


def _require_locked_os(engine: Engine, plan: ReleasePlan, previous: ReleaseLock,
                       path: Path) -> None:
    """Resolving in an OS image that holds other versions than the lock (a newer point
    release, bootstrapped since) would lock layers the locked OS cannot install."""
    for name, entry in sorted(previous.os.items()):
        if name not in plan.os_refs:
            continue
        moved = os_drift(entry.apt, os_packages(engine, plan.os_refs[name]))
        if moved:
            raise InputError([Problem(str(path), 1, f"os.{name}", (
                f"--only keeps the locked OS, but {plan.os_refs[name]} holds {moved[0]} where "
                f"the lock has another version ({len(moved)} package(s) moved): lock without "
                "--only"))])


def os_drift(locked: list[AptPackage], held: list[tuple[str, str, str]]) -> list[str]:
    """`name held-version` for each locked package the OS image holds at another version."""
    versions = {name: version for name, version, _arch in held}
    return [f"{package.name} {versions[package.name]}" for package in
            sorted(locked, key=lambda package: package.name)
            if versions.get(package.name, package.version) != package.version]


def _lock_os(engine: Engine, loaded: LoadedRelease, plan: ReleasePlan,
             previous: ReleaseLock | None, only: tuple[str, ...]) -> dict[str, OsLock]:
    """Every package of each bootstrapped OS base, as the OS image holds them now; with
    --only, the OS bases stay as they were locked."""
    if only and previous is not None:
        return dict(previous.os)
    epoch = int(time.time()) // 86400 * 86400  # the day it was locked: files dated midnight
    return {name: OsLock(suite=base.bootstrap.suite, epoch=epoch,
                         apt=locked_os_packages(engine, plan.os_refs[name], _note))
            for name, base in sorted(loaded.bases.items())
            if name in plan.os_refs and base.bootstrap is not None}


def _kept(plan: ReleasePlan, previous: ReleaseLock | None, only: tuple[str, ...],
          path: Path) -> dict[str, ImageLock]:
    """With --only, every other image's entry of the existing lock."""
    if not only:
        return {}
    names = {spec.name for spec in plan.images}
    unknown = [name for name in only if name not in names]
    if unknown:
        raise InputError([Problem("--only", 1, "only", f"no image named {unknown[0]!r}")])
    if previous is None:
        raise InputError([Problem(str(path), 1, "lock", "--only needs an existing lock")])
    return {name: image for name, image in previous.images.items()
            if name in names and name not in only}


def _kept_platforms(previous: ReleaseLock | None, kept: dict[str, ImageLock],
                    only: tuple[str, ...]) -> dict[str, PlatformLock]:
    """With --only, the other platforms' entries of the images kept on the host's, and
    their OS bases as they were locked (as the host's are)."""
    if not only or previous is None:
        return {}
    return {platform: PlatformLock(images={name: image for name, image
                                           in closure.images.items() if name in kept},
                                   os=dict(closure.os))
            for platform, closure in previous.platforms.items()}


def _previous(path: Path) -> ReleaseLock | None:
    try:
        return load_lock(path)
    except InputError:
        return None  # a damaged lock is replaced: everything shows as new


def _report(path: Path, lock: ReleaseLock, changes: dict[str, list[str]],
            as_json: bool, moved: dict[str, dict[str, list[str]]]) -> None:
    if as_json:
        print(json.dumps({"lock": str(path), "changes": changes,
                          "errors": {n: i.error for n, i in lock.images.items() if i.error},
                          "platforms": {platform: {"images": sorted(closure.images),
                                                   "changes": moved.get(platform, {})}
                                        for platform, closure in sorted(lock.platforms.items())}},
                         indent=2))
        return
    print(f"wrote {path}")
    for name, image in sorted(lock.images.items()):
        state = f"not lockable: {image.error}" if image.error else (
            f"{len(image.pip)} wheels, {len(image.apt)} Debian packages")
        print(f"  {name:<22} {state}")
        if name in changes:
            print(f"  {'':<22} changed: {summary(changes[name])}")
    for name, entry in sorted(lock.os.items()):
        dated = datetime.fromtimestamp(entry.epoch, UTC).date()
        print(f"  os {name:<19} {len(entry.apt)} Debian packages ({entry.suite}, files dated "
              f"{dated})")


def _report_platforms(lock: ReleaseLock, changes: dict[str, dict[str, list[str]]]) -> None:
    """Each other platform's images, and what moved in them."""
    for platform, closure in sorted(lock.platforms.items()):
        print(f"  {platform}: " + ", ".join(
            f"{name} {len(image.pip)} wheels + {len(image.apt)} .debs" if not image.error
            else f"{name} not lockable: {image.error}" for name, image in closure.images.items())
            + "".join(f"; os {name} {len(entry.apt)} .debs" for name, entry in closure.os.items()))
        for name, moved in changes.get(platform, {}).items():
            print(f"  {'':<22} {name} changed: {summary(moved)}")
