"""`ngc-builder security MANIFEST`: the release's locked .debs that its OS's security suite has
fixed since the lock, each with the CVEs its new changelog entries name (docs/security.md).

The suite's InRelease is checked by gpgv, its Packages index against the signed hashes, each
new .deb against the index's SHA256 before its changelog is read (they go to the package cache,
where a patch release's build takes them from)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import requests
from pydantic import ValidationError

from ngc_builder.cache.fetch import fetch_debs
from ngc_builder.cache.store import PackageCache, default_root, open_cache
from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.errors import StepError
from ngc_builder.files import write_atomic
from ngc_builder.lock.models import AptPackage
from ngc_builder.pipeline.prepare import prepare
from ngc_builder.security.report import by_source, fixed_line, markdown, summary, to_json
from ngc_builder.security.scan import Held, holdings, newest, updates, with_changelogs
from ngc_builder.security.suite import (
    STEP,
    SuitePackage,
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


def security_command(options: SecurityOptions) -> int:
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


def apt_package(package: SuitePackage) -> AptPackage:
    """The suite's package held to the lock's patterns (its file a pool path, its hash one)."""
    try:
        return AptPackage(name=package.name, version=package.version, arch=package.arch,
                          file=package.file, sha256=package.sha256, size=package.size)
    except ValidationError as exc:
        field = ".".join(str(part) for part in exc.errors()[0]["loc"])
        raise StepError(f"{package.name} {package.version}"[:120], STEP,
                        f"the index's {field} is not one a lock could hold") from None


def cached_deb(cache: PackageCache, mirror: str, package: SuitePackage) -> Path:
    """The update's .deb in the package cache, downloaded and hash-checked if missing."""
    deb = apt_package(package)
    fetch_debs(cache, mirror, [deb], lambda text: print(f"security: {text}", file=sys.stderr))
    return cache.deb_path(deb)
