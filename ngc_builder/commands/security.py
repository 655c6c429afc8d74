"""`ngc-builder security MANIFEST`: the release's locked .debs that its OS's security suite has
fixed since the lock, each with the CVEs its new changelog entries name (docs/security.md).

The suite's InRelease is checked by gpgv, its Packages index against the signed hashes, each
new .deb against the index's SHA256 before its changelog is read (they go to the package cache,
where a patch release's build takes them from)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests

from ngc_builder.cache.fetch import fetch_debs
from ngc_builder.cache.store import PackageCache, default_root, open_cache
from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.errors import InputError, Problem
from ngc_builder.files import INPUT_LIMIT, read_text, write_atomic
from ngc_builder.lock.models import dump_lock, lock_path
from ngc_builder.pipeline.prepare import Prepared, prepare
from ngc_builder.security.patch import patch_id, patched_lock, patched_manifest, refuse_unmet, unmet
from ngc_builder.security.report import by_source, fixed_line, markdown, summary, to_json
from ngc_builder.security.scan import Held, Update, holdings, newest, updates, with_changelogs
from ngc_builder.security.suite import (
    SuitePackage,
    apt_package,
    security_mirror,
    signed_release,
    suite_packages,
)

Suites = dict[tuple[str, str], dict[tuple[str, str], SuitePackage]]


@dataclass(frozen=True)
class SecurityOptions:
    manifest: Path
    root: Path | None = None
    cache_dir: Path | None = None
    report: Path | None = None  # the findings in Markdown (a patch release's description)
    as_json: bool = False
    patch: bool = False  # write the next patch release: manifest, lock and its fixes
    follow: bool = False  # the monthly tag (`26.12-py3`) moves to the patch's images
    force: bool = False  # replace a patch release's files written before


def security_command(options: SecurityOptions) -> int:
    if (options.follow or options.force) and not options.patch:
        flag = "--follow" if options.follow else "--force"
        raise InputError([Problem(str(options.manifest), 1, flag, "only with --patch")])
    prepared = prepare(options.manifest, options.root, stack_check=False)
    held = holdings(prepared.lock, {spec.name: spec.base for spec in prepared.plan.images})
    cache = open_cache(options.cache_dir or default_root())
    mirror = security_mirror()
    with requests.Session() as session:
        found = updates(held, suites(session, mirror, held))
    # One .deb of each source first, in parallel: its changelog serves all of its binaries.
    fetch_debs(cache, mirror, [apt_package(group[0].fixed) for group in by_source(found)],
               lambda text: print(f"security: {text}", file=sys.stderr))
    found = with_changelogs(found, lambda package: cached_deb(cache, mirror, package))
    if options.report is not None:
        write_atomic(options.report, markdown(found, prepared.plan.release))
    if options.as_json:
        print(to_json(found))
    else:
        print("\n".join([*map(fixed_line, by_source(found)), summary(found)]))
    if options.patch:
        write_patch(options, prepared, found, lambda package: cached_deb(cache, mirror, package))
    return EXIT_OK


def suites(session: requests.Session, mirror: str, held: list[Held]) -> Suites:
    """The newest packages of each security suite and architecture the lock holds .debs of
    (`all` packages are in every architecture's index)."""
    found: Suites = {}
    for codename in sorted({package.codename for package in held}):
        release = signed_release(session, mirror, codename)
        arches = {p.arch for p in held if p.codename == codename} - {"all"} or {"amd64"}
        for arch in sorted(arches):
            found[codename, arch] = newest(suite_packages(session, mirror, codename, release,
                                                          arch))
    return found


def cached_deb(cache: PackageCache, mirror: str, package: SuitePackage) -> Path:
    """The update's .deb in the package cache, downloaded and hash-checked if missing."""
    deb = apt_package(package)
    fetch_debs(cache, mirror, [deb], lambda text: print(f"security: {text}", file=sys.stderr))
    return cache.deb_path(deb)


def write_patch(options: SecurityOptions, prepared: Prepared, found: list[Update],
                deb_of: Callable[[SuitePackage], Path]) -> None:
    """The next patch release beside the manifest, all three files or none: its manifest,
    its lock (checked by loading it back as a release would) and its fixes in Markdown."""
    if not found:
        print("security: nothing to patch", file=sys.stderr)
        return
    release_id = patch_id(prepared.loaded)
    target = options.manifest.with_name(f"{release_id}.yaml")
    files = [target, lock_path(target), target.with_suffix(".security.md")]
    if any(path.exists() for path in files) and not options.force:
        raise InputError([Problem(str(target), 1, "--patch", "exists already (--force "
                                  "replaces it)")])
    base_of = {spec.name: spec.base for spec in prepared.plan.images}
    lock = patched_lock(prepared.loaded, prepared.plan, prepared.lock, found, release_id)
    refuse_unmet(unmet(lock, found, deb_of, base_of), files[1])
    texts = [patched_manifest(read_text(options.manifest, INPUT_LIMIT),
                              int(release_id.rsplit(".", 1)[1]), options.follow,
                              prepared.loaded.release.release),
             dump_lock(lock), markdown(found, release_id)]
    try:
        for path, text in zip(files, texts, strict=True):
            write_atomic(path, text)
        prepare(target, options.root, stack_check=False)  # a stale or broken lock: refused
    except BaseException:
        for path in files:
            path.unlink(missing_ok=True)
        raise
    print(f"wrote {', '.join(map(str, files))}: `ngc-builder release {target}` builds only "
          "the images that hold a fixed .deb, and those on them", file=sys.stderr)
