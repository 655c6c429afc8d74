"""Which versions of a distribution an index holds for an image's interpreter and platform.

pip answers (`pip index versions`), told the image's Python, glibc platforms and CPython, and
`--only-binary=:all:`: a version without a wheel for the image cannot be installed in it, so
it is not a version the bump may choose. Requires-Python is ignored here on purpose: the
track rules read it from the chosen wheel's metadata, so a version that is too new for the
base is named with its reason instead of silently missing. pip runs in `resolution_env()`:
the host's index and proxy settings apply, its constraint files never do.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Protocol

from packaging.version import InvalidVersion, Version

from ngc_builder.errors import StepError
from ngc_builder.manifest.pip_env import resolution_env
from ngc_builder.manifest.wheels import Target


class VersionIndex(Protocol):
    """The final-release versions of `name` with a wheel for `target`, newest first."""

    def __call__(self, name: str, target: Target) -> list[str]: ...


def final_releases(versions: list[str]) -> list[str]:
    """Newest first, without pre-, dev- or unparseable versions (never a bump's choice)."""
    parsed: list[Version] = []
    for text in versions:
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if not (version.is_prerelease or version.is_devrelease):
            parsed.append(version)
    return [str(v) for v in sorted(set(parsed), reverse=True)]


def pip_versions(name: str, target: Target) -> list[str]:
    """The real index, through this interpreter's pip (a `VersionIndex`)."""
    done = subprocess.run(_command(name, target), capture_output=True, text=True,
                          check=False, env=resolution_env().variables)
    if done.returncode != 0:
        if "No matching distribution" in done.stderr:
            return []  # no wheel for this target at all: nothing to choose from
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR")]
        reason = lines[-1] if lines else done.stderr.strip()[-300:]
        raise StepError("bump", f"versions of {name}", reason)
    return final_releases(list(json.loads(done.stdout)["versions"]))


def _command(name: str, target: Target) -> list[str]:
    return [sys.executable, "-m", "pip", "index", "versions", name, "--json",
            "--disable-pip-version-check", "--ignore-requires-python", "--only-binary=:all:",
            "--python-version", target.python, "--implementation", "cp",
            *[arg for platform in target.platforms() for arg in ("--platform", platform)]]


class MemoIndex:
    """Asks `inner` once per (name, target): a bump asks the same wheel for every framework."""

    def __init__(self, inner: VersionIndex) -> None:
        self._inner = inner
        self._seen: dict[tuple[str, Target], list[str]] = {}

    def __call__(self, name: str, target: Target) -> list[str]:
        key = (name, target)
        if key not in self._seen:
            self._seen[key] = self._inner(name, target)
        return list(self._seen[key])
