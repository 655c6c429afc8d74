"""Fill the cache: the host downloads what a lock names and the cache lacks, once.

Wheels come through the host's pip (its index, mirror, proxy and CA settings; not its
constraint files), asked for the exact file by hash for the image's own target. .debs
come from the host's Debian mirror. Nothing of either setting reaches a build: builds get
the files from the cache over plain HTTP.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import requests
from packaging.utils import canonicalize_name

from ngc_builder.cache.store import HashMismatch, PackageCache
from ngc_builder.errors import StepError
from ngc_builder.lock.models import AptPackage, PipPackage
from ngc_builder.lock.pip import pip_error
from ngc_builder.manifest.pip_env import resolution_env
from ngc_builder.manifest.wheels import Target
from ngc_builder.services.streams import LineSink

PARALLEL_DOWNLOADS = 4
PARALLEL_PIP = 3


@dataclass(frozen=True)
class Fetched:
    files: int
    bytes: int


def fetch_wheels(cache: PackageCache, target: Target, packages: Iterable[PipPackage],
                 sink: LineSink) -> Fetched:
    """Download the wheels of `packages` that the cache lacks, each checked by hash."""
    missing = cache.missing_wheels(packages)
    if not missing:
        return Fetched(0, 0)
    sink(f"fetching {len(missing)} wheels for Python {target.python}")
    # One pip downloads one file at a time (~85 MB/s here, a third of it pip's own CPU): a
    # few side by side, each with a share of every batch.
    shares = [batch[start::PARALLEL_PIP] for batch in one_version_each(missing)
              for start in range(PARALLEL_PIP) if batch[start::PARALLEL_PIP]]
    with ThreadPoolExecutor(PARALLEL_PIP, thread_name_prefix="pip") as pool:
        kept = sum(pool.map(lambda share: _fetch_batch(cache, target, share), shares))
    return Fetched(len(missing), kept)


def one_version_each(packages: list[PipPackage]) -> list[list[PipPackage]]:
    """`packages` in batches naming each distribution once: two images of a release may lock
    one package at two versions, and pip refuses a requirements file that asks for both."""
    batches: list[list[PipPackage]] = []
    for package in packages:
        name = canonicalize_name(package.name)
        free = next((b for b in batches if all(canonicalize_name(p.name) != name for p in b)),
                    None)
        if free is None:
            batches.append(free := [])
        free.append(package)
    return batches


def _fetch_batch(cache: PackageCache, target: Target, batch: list[PipPackage]) -> int:
    with tempfile.TemporaryDirectory(prefix="ngc-fetch-") as scratch:
        folder = Path(scratch)
        wanted = folder / "requirements.txt"
        wanted.write_text("".join(f"{p.requirement()}\n" for p in batch))
        done = _pip_download(folder, target, wanted)
        if done.returncode != 0:
            raise StepError("cache", "fetch wheels", pip_error(done.stderr))
        return sum(_keep(cache, folder / "files", p) for p in batch)


def _pip_download(folder: Path, target: Target,
                  wanted: Path) -> subprocess.CompletedProcess[str]:
    platforms = [arg for tag in target.platforms() for arg in ("--platform", tag)]
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary=:all:", "--disable-pip-version-check", "--python-version",
               target.python, "--implementation", "cp", *platforms, "--require-hashes",
               "-d", str(folder / "files"), "-r", str(wanted)]
    return subprocess.run(command, capture_output=True, text=True, check=False,
                          env=resolution_env().variables)


def _keep(cache: PackageCache, folder: Path, package: PipPackage) -> int:
    source = folder / package.file
    if not source.is_file():
        raise StepError("cache", "fetch wheels",
                        f"pip downloaded no {package.file} for {package.name}=={package.version}")
    size = source.stat().st_size
    try:
        cache.add(source, package.sha256, cache.wheel_path(package))
    except HashMismatch as exc:
        raise StepError("cache", "fetch wheels", str(exc)) from None
    return size


def fetch_debs(cache: PackageCache, mirror: str, packages: Iterable[AptPackage],
               sink: LineSink) -> Fetched:
    """Download the .debs of `packages` that the cache lacks from `mirror`."""
    missing = cache.missing_debs(packages)
    if not missing:
        return Fetched(0, 0)
    sink(f"fetching {len(missing)} Debian packages from {mirror}")
    with requests.Session() as session, ThreadPoolExecutor(PARALLEL_DOWNLOADS) as pool:
        sizes = list(pool.map(lambda p: _download_deb(session, cache, mirror, p), missing))
    return Fetched(len(missing), sum(sizes))


def _download_deb(session: requests.Session, cache: PackageCache, mirror: str,
                  package: AptPackage) -> int:
    url = f"{mirror.rstrip('/')}/{package.file}"
    destination = cache.deb_path(package)
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=destination.parent, delete=False) as part:
        try:
            with session.get(url, stream=True, timeout=120) as response:
                response.raise_for_status()
                for block in response.iter_content(1 << 20):
                    part.write(block)
        except requests.RequestException as exc:
            Path(part.name).unlink(missing_ok=True)
            raise StepError("cache", f"fetch {package.pin()}", _why(exc)) from None
    try:
        cache.add(Path(part.name), package.sha256, destination)
    except HashMismatch as exc:
        Path(part.name).unlink(missing_ok=True)
        raise StepError("cache", f"fetch {package.pin()}", str(exc)) from None
    return package.size


def _why(exc: requests.RequestException) -> str:
    response = exc.response
    if response is not None and response.status_code == 404:
        return (f"{response.url}: 404, the mirror no longer has this version "
                "(lock again, or set NGC_DEBIAN_MIRROR to a snapshot mirror)")
    return f"{exc.__class__.__name__}: {exc}"
