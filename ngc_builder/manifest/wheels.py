"""Read a wheel's declared requirements without downloading it.

pip resolves the wheel the image would get (target Python, manylinux platform) and reads
its METADATA through HTTP range requests (`fast-deps`), so a 500 MB framework wheel costs
a few kilobytes. pip's own index settings apply, so a mirror or proxy configured for pip
is used here too; nothing else of the host's pip configuration does (`pip_env.py`). Answers are
cached on disk: wheel metadata never changes.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from ngc_builder.errors import StepError
from ngc_builder.files import INPUT_LIMIT, read_text, write_atomic
from ngc_builder.manifest.pip_env import resolution_env
from ngc_builder.services.environment import xdg_home


@dataclass(frozen=True)
class Target:
    """The interpreter and platform a wheel is chosen for."""

    python: str
    glibc: str
    machine: str = "x86_64"

    def platforms(self) -> list[str]:
        major, minor = (int(part) for part in self.glibc.split(".")[:2])
        tags = [f"manylinux_{major}_{n}_{self.machine}" for n in range(minor, 4, -1)]
        # pip matches tags exactly: wheels tagged only with the legacy aliases
        # (manylinux2014 = glibc 2.17, manylinux2010 = 2.12, manylinux1 = 2.5) need them named.
        legacy = [("manylinux2014", 17), ("manylinux2010", 12), ("manylinux1", 5)]
        return tags + [f"{alias}_{self.machine}" for alias, needs in legacy if minor >= needs]


@dataclass(frozen=True)
class WheelMetadata:
    name: str
    version: str
    requires_python: str
    requires_dist: tuple[str, ...]


Fetcher = Callable[[str, Target], WheelMetadata]


def cache_dir() -> Path:
    base = xdg_home("XDG_CACHE_HOME", Path.home() / ".cache")
    return base / "ngc-builder" / "wheel-metadata"


def fetch_metadata(requirement: str, target: Target) -> WheelMetadata:
    """Metadata of the wheel pip would install for `requirement` on `target`."""
    key = hashlib.sha256(f"{requirement}|{target}".encode()).hexdigest()[:24]
    cached = cache_dir() / f"{key}.json"
    if cached.exists():
        data = json.loads(read_text(cached, INPUT_LIMIT))
        return WheelMetadata(**{**data, "requires_dist": tuple(data["requires_dist"])})
    # A cold cache takes seconds per wheel: say what is being waited for.
    print(f"stack check: reading the metadata of {requirement} for Python {target.python}, "
          f"glibc {target.glibc}", file=sys.stderr)
    found = _ask_pip(requirement, target)
    if "==" in requirement and "*" not in requirement:
        # An exact pin names one wheel forever; a range may pick a newer one tomorrow.
        write_atomic(cached, json.dumps(asdict(found)))
    return found


def _ask_pip(requirement: str, target: Target) -> WheelMetadata:
    done = _pip_dry_run(requirement, target, ["--use-feature=fast-deps"])
    if done.returncode != 0 and "fast-deps" in done.stderr and "invalid choice" in done.stderr:
        # A pip without range-request metadata still answers, by downloading the wheel.
        done = _pip_dry_run(requirement, target, [])
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR")]
        reason = lines[-1] if lines else done.stderr.strip()[-300:]
        applied = resolution_env().applied
        if applied:  # the host settings that could be in the way, and where they are set
            reason += f" (host pip settings applied: {', '.join(applied)})"
        raise StepError("stack-check", f"wheel metadata of {requirement}", reason)
    installs = json.loads(done.stdout)["install"]
    meta = installs[0]["metadata"]
    return WheelMetadata(meta["name"], meta["version"], meta.get("requires_python") or "",
                         tuple(meta.get("requires_dist") or ()))


def _pip_dry_run(
    requirement: str, target: Target, features: list[str]
) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="ngc-meta-") as scratch:
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
                   "--report", "-", "--no-deps", "--ignore-installed",
                   "--ignore-requires-python", "--only-binary=:all:", *features,
                   "--disable-pip-version-check", "--python-version", target.python,
                   "--implementation", "cp",
                   *[arg for p in target.platforms() for arg in ("--platform", p)],
                   "--target", scratch, requirement]
        return subprocess.run(command, capture_output=True, text=True, check=False,
                              env=resolution_env().variables)

