"""Resolve an image's full Python closure for its own target with pip's resolver.

Why pip and not uv: pip's `install --dry-run --report` resolves for a foreign target
(`--python-version`, `--platform`, `--only-binary`) and reports, per distribution, the one
file it chose for that target with its sha256, which is exactly what a lock needs; it reads
the host's index settings (a mirror, local wheel folders) the same way the stack check does,
and the host's constraint files are kept out (`pip_env.py`). uv is faster, but its hashes
list every file of a version and it reads none of pip's configuration. Metadata comes from
the index's PEP 658 files, so resolving torch downloads no torch wheel.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ngc_builder.files import file_sha256
from ngc_builder.lock.models import PipPackage, normalise
from ngc_builder.manifest.pip_env import resolution_env
from ngc_builder.manifest.wheels import Target

Report = Mapping[str, Any]
PipRunner = Callable[[list[str]], subprocess.CompletedProcess[str]]


class ResolutionError(Exception):
    """pip found no set of wheels for the requirements: the message is pip's last error."""


def resolve_pip(requirements: list[str], target: Target, parent: list[PipPackage],
                run: PipRunner | None = None, pins: list[PipPackage] | None = None,
                ) -> list[PipPackage]:
    """Every wheel `requirements` install on `target` on top of `parent` (whose versions are
    kept), sorted by name; the parent's own packages are left out. `pins`: versions to keep
    where the same package is installed (another platform's lock of the same image)."""
    if not requirements:
        return []
    kept = {p.name: p.version for p in [*(pins or []), *parent]}  # the parent's win
    with tempfile.TemporaryDirectory(prefix="ngc-lock-") as scratch:
        folder = Path(scratch)
        (folder / "requirements.txt").write_text("\n".join(requirements) + "\n")
        (folder / "constraints.txt").write_text(
            "".join(f"{name}=={version}\n" for name, version in sorted(kept.items())))
        done = (run or _run_pip)(pip_arguments(folder, target))
    if done.returncode != 0:
        raise ResolutionError(pip_error(done.stderr))
    inherited = {p.name for p in parent}
    found = packages_of(json.loads(done.stdout))
    return [p for p in found if p.name not in inherited]


def pip_arguments(folder: Path, target: Target) -> list[str]:
    platforms = [arg for tag in target.platforms() for arg in ("--platform", tag)]
    return ["install", "--dry-run", "--quiet", "--report", "-", "--ignore-installed",
            "--only-binary=:all:", "--disable-pip-version-check", "--python-version",
            target.python, "--implementation", "cp", *platforms,
            "--target", str(folder / "target"), "-r", str(folder / "requirements.txt"),
            "-c", str(folder / "constraints.txt")]


def _run_pip(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *arguments], capture_output=True,
                          text=True, check=False, env=resolution_env().variables)


def pip_error(stderr: str) -> str:
    """pip's reason in one line: the last ERROR line, else the last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["pip failed with no output"])[-1]


def packages_of(report: Report) -> list[PipPackage]:
    """The install report as locked packages, sorted by name."""
    found = [_package(item) for item in report.get("install", [])]
    return sorted(found, key=lambda package: package.name)


def _package(item: Report) -> PipPackage:
    metadata, info = item["metadata"], item["download_info"]
    url = str(info["url"])
    return PipPackage(name=normalise(metadata["name"]), version=str(metadata["version"]),
                      file=unquote(Path(urlparse(url).path).name),
                      sha256=_sha256(info.get("archive_info") or {}, url))


def _sha256(archive: Report, url: str) -> str:
    hashes = archive.get("hashes") or {}
    if "sha256" in hashes:
        return str(hashes["sha256"])
    legacy = str(archive.get("hash") or "")
    if legacy.startswith("sha256="):
        return legacy.removeprefix("sha256=")
    parsed = urlparse(url)
    if parsed.scheme == "file":  # a wheel in a local folder: pip reports no hash for it
        return file_sha256(Path(unquote(parsed.path)))
    raise ResolutionError(f"the index gave no sha256 for {url}")
