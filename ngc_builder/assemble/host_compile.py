"""Bytecode for another platform's wheels, compiled natively: a .pyc is the same on every
platform for the same Python, source and header, so the venv tar's sources are compiled by
the same Python of the host platform's image (a container of it, through the engine API: a
remote build host works as a local one), and the .pyc files are appended to the tar. Under
emulation compiling JAX's 3,181 files took 5 minutes; natively it takes seconds.

Timestamp pycs, as pip writes them: their header holds each source's mtime and size, and the
tar gives every source the same fixed mtime, so they stay valid in the image.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any

import docker.errors
import requests

from ngc_builder.errors import StepError
from ngc_builder.services.engine import Engine, discard

STAGE = "/ngc-stage"
VENV = PurePosixPath("/opt/venv")
MAX_PYC_BYTES = 4 * 1024**3  # what a compile may give back, all .pyc files together
MAX_SPOOL_BYTES = 8 * 1024**3  # an archive the engine sends back, sources included
WAIT_S = 1800


def compile_natively(engine: Engine, host_image: str, venv_tar: Path, site_packages: str,
                     epoch: int, image: str) -> int:
    """Append to `venv_tar` the .pyc of every source it holds under `site_packages`, compiled
    in a container of `host_image`; returns how many. StepError names `image`."""
    # One process: with workers (`-j 0`) a .pyc's bytes depend on which files its worker
    # compiled before it (marshal marks objects by their reference counts). Measured on the
    # 7,341 .pyc of pytorch's arm64 venv tar: two runs with workers differed in one or two
    # files (nbformat, onnx), two runs in one process were the same; 36-52 s against 30-48 s.
    command = ["python3", "-m", "compileall", "-q", "-j", "1", "-s", STAGE, "-p", "/",
               "--invalidation-mode", "timestamp", f"{STAGE}{site_packages}"]
    try:
        container: Any = engine.containers.create(host_image, command, entrypoint=[],
                                                  network_disabled=True, user="0")
    except (docker.errors.DockerException, requests.RequestException) as exc:
        raise StepError(image, "compile", f"cannot start {host_image}: {exc}") from None
    try:
        return _compile_in(container, venv_tar, site_packages, epoch, image)
    except (docker.errors.DockerException, requests.RequestException, tarfile.TarError) as exc:
        raise StepError(image, "compile", f"{exc.__class__.__name__}: {exc}") from None
    finally:
        discard(container)


def _compile_in(container: Any, venv_tar: Path, site_packages: str, epoch: int,
                image: str) -> int:
    container.put_archive("/", _folder_tar(STAGE))  # put_archive wants its target to exist
    sources = venv_tar.with_name(venv_tar.name + ".sources")
    try:
        _write_sources(venv_tar, PurePosixPath(site_packages), sources)
        with sources.open("rb") as stream:
            container.put_archive(STAGE, stream)
    finally:
        sources.unlink(missing_ok=True)
    container.start()
    status = container.wait(timeout=WAIT_S)
    if status.get("StatusCode") != 0:
        tail = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")[-300:]
        raise StepError(image, "compile", f"compileall exited {status.get('StatusCode')}: "
                        f"{tail.strip()}")
    chunks, _ = container.get_archive(f"{STAGE}{site_packages}")
    return _append_pycs(io.BufferedReader(_Chunks(chunks)), venv_tar,
                        PurePosixPath(site_packages), epoch)


# Only the sources go in (and so come back): torch's tar is 1 GB of which its .py files are a
# few percent, and the engine would write, then tar up again, every shared library.
def _write_sources(venv_tar: Path, site_packages: PurePosixPath, out: Path) -> None:
    """`out`: the folders and .py files of `venv_tar` under `site_packages`, as they are."""
    inside = site_packages.as_posix().lstrip("/") + "/"
    with tarfile.open(venv_tar, "r|") as found, \
            tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as written:
        for member in found:
            if not member.name.startswith(inside):
                continue
            if member.isdir():
                written.addfile(member)
            elif member.isfile() and member.name.endswith(".py"):
                written.addfile(member, found.extractfile(member))


def _append_pycs(stream: IO[bytes], venv_tar: Path, site_packages: PurePosixPath,
                 epoch: int) -> int:
    """The __pycache__ folders and .pyc files of the archive `stream` (rooted at
    site-packages' own name), appended to `venv_tar` root-owned and dated `epoch`."""
    added, total = 0, 0
    with _in_name_order(stream, venv_tar.parent) as (found, members), \
            tarfile.open(venv_tar, "a", format=tarfile.PAX_FORMAT) as out:
        for member in members:
            parts = PurePosixPath(member.name).parts
            if len(parts) < 2 or parts[0] != site_packages.name or ".." in parts:
                continue
            target = site_packages.joinpath(*parts[1:])
            if member.isdir() and parts[-1] == "__pycache__":
                out.addfile(_entry(target, tarfile.DIRTYPE, 0o755, 0, epoch))
            elif member.isfile() and parts[-1].endswith(".pyc") and "__pycache__" in parts:
                total += member.size
                if total > MAX_PYC_BYTES:
                    raise tarfile.TarError("the compiled bytecode is larger than 4 GB")
                content = found.extractfile(member)
                out.addfile(_entry(target, tarfile.REGTYPE, 0o644, member.size, epoch), content)
                added += 1
    return added


def copy_venv(engine: Engine, host_image: str, out: Path, image: str, epoch: int) -> int:
    """`out`: the host platform's /opt/venv, taken from `host_image` as its files are (modes,
    links, times: pip's own .pyc stay valid), owned by root, after /opt itself dated `epoch`
    (as the host platform's venv step left it: `ADD` would date it with the build's time);
    returns how many entries."""
    try:
        # Any: the archive calls are docker-py's own, beyond what Engine's protocol names.
        container: Any = engine.containers.create(host_image, ["true"], entrypoint=[],
                                                  network_disabled=True)
    except (docker.errors.DockerException, requests.RequestException) as exc:
        raise StepError(image, "venv", f"cannot read {host_image}: {exc}") from None
    try:
        chunks, _ = container.get_archive(str(VENV))
        return _rerooted(io.BufferedReader(_Chunks(chunks)), out, out.parent, epoch)
    except (docker.errors.DockerException, requests.RequestException, tarfile.TarError) as exc:
        raise StepError(image, "venv", f"{exc.__class__.__name__}: {exc}") from None
    finally:
        discard(container)


@contextlib.contextmanager
def _in_name_order(stream: IO[bytes], spool: Path) -> Iterator[tuple[tarfile.TarFile,
                                                                     list[tarfile.TarInfo]]]:
    """The archive `stream` and its members sorted by name. The engine's archive lists a
    folder in the order its file system reads it, which differs from one data root to another
    (a layer built from it differed between two engines, its files the same): a layer's tar
    lists its entries in one order wherever it is made. Spooled to a file in `spool`, never
    past MAX_SPOOL_BYTES (the engine's answer is input too)."""
    with tempfile.TemporaryFile(dir=spool) as copy:
        while chunk := stream.read(1 << 20):
            if copy.tell() + len(chunk) > MAX_SPOOL_BYTES:
                raise tarfile.TarError("the engine's archive is larger than 8 GB")
            copy.write(chunk)
        copy.seek(0)
        with tarfile.open(fileobj=copy, mode="r:") as found:
            yield found, sorted(found.getmembers(), key=lambda member: member.name)


def _rerooted(stream: IO[bytes], out: Path, spool: Path, epoch: int) -> int:
    count = 0
    with _in_name_order(stream, spool) as (found, members), \
            tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as written:
        written.addfile(_entry(VENV.parent, tarfile.DIRTYPE, 0o755, 0, epoch))
        for member in members:
            parts = PurePosixPath(member.name).parts
            if not parts or parts[0] != VENV.name or ".." in parts or not (
                    member.isfile() or member.isdir() or member.issym()):
                continue
            member.name = VENV.parent.joinpath(*parts).as_posix().lstrip("/")
            member.uid = member.gid = 0
            member.uname = member.gname = "root"
            written.addfile(member, found.extractfile(member) if member.isfile() else None)
            count += 1
    return count


def _folder_tar(folder: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(_entry(PurePosixPath(folder), tarfile.DIRTYPE, 0o755, 0, 0))
    return buffer.getvalue()


def _entry(path: PurePosixPath, kind: bytes, mode: int, size: int, epoch: int) -> tarfile.TarInfo:
    entry = tarfile.TarInfo(path.as_posix().lstrip("/"))
    entry.type, entry.mode, entry.size, entry.mtime = kind, mode, size, epoch
    entry.uid = entry.gid = 0
    entry.uname = entry.gname = "root"
    return entry


class _Chunks(io.RawIOBase):
    """The engine's archive chunks as a file that tarfile reads in stream mode."""

    def __init__(self, chunks: Any) -> None:
        self.chunks = iter(chunks)
        self.pending = memoryview(b"")  # a view: handing out a piece copies only that piece

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending:
            try:
                self.pending = memoryview(next(self.chunks))
            except StopIteration:
                return 0
        size = min(len(buffer), len(self.pending))
        buffer[:size], self.pending = self.pending[:size], self.pending[size:]
        return size
