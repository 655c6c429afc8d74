"""Read a wheel's declared requirements without downloading it.

pip resolves the wheel the image would get (target Python, manylinux platform) and reads
its METADATA through HTTP range requests (`fast-deps`), so a 500 MB framework wheel costs
a few kilobytes. pip's own index settings apply, so a mirror or proxy configured for pip
is used here too; nothing else of the host's pip configuration does (a global constraint file
capping torch is about the host's environments, not the image's). Answers are cached on disk:
wheel metadata never changes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from ngc_builder.errors import StepError


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
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ngc-builder" / "wheel-metadata"


def fetch_metadata(requirement: str, target: Target) -> WheelMetadata:
    """Metadata of the wheel pip would install for `requirement` on `target`."""
    key = hashlib.sha256(f"{requirement}|{target}".encode()).hexdigest()[:24]
    cached = cache_dir() / f"{key}.json"
    if cached.exists():
        data = json.loads(cached.read_text())
        return WheelMetadata(**{**data, "requires_dist": tuple(data["requires_dist"])})
    found = _ask_pip(requirement, target)
    if "==" in requirement and "*" not in requirement:
        # An exact pin names one wheel forever; a range may pick a newer one tomorrow.
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(asdict(found)))
    return found


def _ask_pip(requirement: str, target: Target) -> WheelMetadata:
    done = _pip_dry_run(requirement, target, ["--use-feature=fast-deps"])
    if done.returncode != 0 and "fast-deps" in done.stderr and "invalid choice" in done.stderr:
        # A pip without range-request metadata still answers, by downloading the wheel.
        done = _pip_dry_run(requirement, target, [])
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR")]
        reason = lines[-1] if lines else done.stderr.strip()[-300:]
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
                              env=resolution_env())


# The settings that say where wheels come from and how to reach them: kept from the host.
INDEX_OPTIONS = ("index-url", "extra-index-url", "find-links", "no-index", "trusted-host",
                 "cert", "client-cert", "proxy", "timeout", "default-timeout", "retries")
# What would make the host's environments part of the image's resolution: dropped.
HOST_ONLY = ("PIP_CONSTRAINT", "PIP_REQUIREMENT", "PIP_BUILD_CONSTRAINT", "PIP_USER",
             "PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_REQUIRE_VIRTUALENV")
_CONFIG_LINE = re.compile(r"(global|install)\.([a-z-]+)='(.*)'")


def resolution_env(config_listing: str | None = None) -> dict[str, str]:
    """The environment for pip when it resolves for an image: no configuration file is read
    (PIP_CONFIG_FILE=/dev/null), the files' index settings come back as variables, and
    variables that constrain the host's installs are dropped. `config_listing`: the output
    of `pip config list` (default: asked of this pip)."""
    listing = _pip_config_listing() if config_listing is None else config_listing
    env = {key: value for key, value in os.environ.items() if key not in HOST_ONLY}
    for option, value in _index_settings(listing).items():
        env.setdefault("PIP_" + option.upper().replace("-", "_"), value)  # variables win
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def _index_settings(listing: str) -> dict[str, str]:
    """option -> value from the configuration files; `install.` overrides `global.`."""
    found: dict[str, str] = {}
    for section in ("global", "install"):
        for line in listing.splitlines():
            match = _CONFIG_LINE.fullmatch(line.strip())
            if match and match.group(1) == section and match.group(2) in INDEX_OPTIONS:
                found[match.group(2)] = match.group(3)
    return found


@functools.cache
def _pip_config_listing() -> str:
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                          text=True, check=False)
    return done.stdout if done.returncode == 0 else ""
