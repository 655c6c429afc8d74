"""Layers that are the same wherever and whenever they are built. The classic builder writes
every file's time into a layer, and a COPY or a RUN leaves the time of the build on each file
and folder it touches; so each rendered Dockerfile is made to build the same bytes from the
same inputs (docs/reproducible.md):

- `ARG SOURCE_DATE_EPOCH=<the lock's OS epoch>` after FROM: every RUN sees it (Python then
  writes hash-checked bytecode, which holds no time), the image's environment does not;
- every RUN goes through the build shell (`SHELL`, set back to `/bin/sh -c` at the end so the
  image keeps the default): the step, then the logs it wrote emptied and every file it wrote
  dated the epoch (`BUILD_SHELL_SCRIPT`);
- every `COPY` becomes the `ADD` of a tar made here: root-owned, dated the epoch, in a stable
  order, with the folders above each file (Docker dates a folder COPY creates or adds to with
  the time of the build).
"""

from __future__ import annotations

import io
import shlex
import tarfile
from collections.abc import Mapping
from pathlib import PurePosixPath

from ngc_builder.lock.models import OsLock

BUILD_SHELL = "/opt/ngc/bin/ngc-build-shell"
BUILD_SHELL_TAR = "ngc-build-shell.tar"
# Folders of ours that are not 0755 (the base makes /workspace writable by any UID).
FOLDER_MODES = {PurePosixPath("/workspace"): 0o1777}
# Files the engine sets up in every build container (its init layer): never touched, or they
# would be copied into the step's layer.
ENGINE_FILES = ("/proc", "/sys", "/dev", "/.dockerenv", "/etc/mtab", "/etc/hosts",
                "/etc/hostname", "/etc/resolv.conf")
# What a step writes that holds the time of the build or the build machine's state: apt's and
# dpkg's logs, ldconfig's stat cache. Emptied, not removed: removing a file a lower layer
# holds leaves a whiteout, and the engine dates a whiteout with the time of the build.
LEFTOVERS = ("/var/log/apt", "/var/log/dpkg.log", "/var/log/alternatives.log",
             "/var/cache/ldconfig/aux-cache")

BUILD_SHELL_SCRIPT = f"""#!/bin/sh
# ngc-builder's build shell: the SHELL of every RUN while one of its images is built
# (render/repro.py). The step runs as /bin/sh -c would run it; then the logs it wrote are
# emptied, and every file it wrote is dated SOURCE_DATE_EPOCH.
set -e
[ "$1" = "-c" ] && shift
started=$(( $(date +%s) - 1 ))
/bin/sh -c "$1"
[ -n "${{SOURCE_DATE_EPOCH:-}}" ] || exit 0
for left in {" ".join(LEFTOVERS)}; do
  find "$left" -type f -newermt "@$started" -exec truncate -s 0 {{}} + 2>/dev/null || true
done
find / -xdev \\( {" -o ".join(f"-path {path}" for path in ENGINE_FILES)} \\) -prune \\
  -o -newermt "@$started" -print0 | xargs -0r touch -h -d "@$SOURCE_DATE_EPOCH"
# /etc holds the engine's files, set up as the container was made: its time is that moment,
# on either side of $started as the host is busy. Dated always, it is in every step's layer.
touch -h -d "@$SOURCE_DATE_EPOCH" /etc
"""


# An OS pulled by reference has no lock epoch: 1980-01-01, the earliest time a wheel (a zip)
# can hold. Not the release's month: the shared layers' keys name no release.
UNLOCKED_EPOCH = 315532800


def source_epoch(os_locks: Mapping[str, OsLock], base: str) -> int:
    """SOURCE_DATE_EPOCH of an image: its OS lock's (fixed when the lock was made)."""
    return os_locks[base].epoch if base in os_locks else UNLOCKED_EPOCH


def reproducible(dockerfile: str, files: dict[str, bytes], kind: str,
                 epoch: int) -> tuple[str, dict[str, bytes]]:
    """A rendered image's Dockerfile and context made to build the same layers from the same
    inputs (see above)."""
    lines = dockerfile.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("FROM ")) + 1
    files = dict(files)
    body = [_copy_as_add(line, n, files, epoch) for n, line in enumerate(lines[start:])]
    head = [f"ARG SOURCE_DATE_EPOCH={epoch}"]
    if kind == "base":  # every image above inherits the build shell from it
        files[BUILD_SHELL_TAR] = _tar({PurePosixPath(BUILD_SHELL): BUILD_SHELL_SCRIPT.encode()},
                                      epoch, executable=True)
        head.append(f"ADD {BUILD_SHELL_TAR} /")
    head.append(f'SHELL ["{BUILD_SHELL}", "-c"]')
    tail = ["", "# Builds on this image get Docker's default shell.", 'SHELL ["/bin/sh", "-c"]']
    return "\n".join([*lines[:start], *head, *body, *tail]) + "\n", files


def _copy_as_add(line: str, number: int, files: dict[str, bytes], epoch: int) -> str:
    """A `COPY SRC... DEST` line as the ADD of a tar of what it copies; others as they are."""
    if not line.startswith("COPY "):
        return line
    *sources, dest = shlex.split(line[len("COPY "):])
    if any(source.startswith("--") for source in sources):  # --chown, --from: not ours to say
        raise ValueError(f"{line}: COPY takes no flags in a template (render/repro.py makes "
                         "each COPY a tar, owned by root)")
    into_folder = dest.endswith("/") or len(sources) > 1
    placed: dict[PurePosixPath, bytes] = {}
    for source in sources:
        placed.update(_placed(source.rstrip("/"), dest, into_folder, files))
    if not placed:
        raise ValueError(f"COPY {' '.join(sources)}: nothing in the build context")
    if any(".." in target.parts or not target.is_absolute() for target in placed):
        raise ValueError(f"COPY to {dest}: not an absolute path inside the image")
    name = f"copy-{number:03d}.tar"
    files[name] = _tar(placed, epoch)
    return f"# {line}: as a tar, dated SOURCE_DATE_EPOCH\nADD {name} /"


def _placed(source: str, dest: str, into_folder: bool,
            files: dict[str, bytes]) -> dict[PurePosixPath, bytes]:
    """Where COPY puts `source`'s files: a file at DEST (or DEST/its name), a folder's
    contents under DEST."""
    if source in files:
        target = PurePosixPath(dest) / PurePosixPath(source).name if into_folder else \
            PurePosixPath(dest)
        return {target: files[source]}
    return {PurePosixPath(dest) / name[len(source) + 1:]: content
            for name, content in files.items() if name.startswith(source + "/")}


def _tar(placed: dict[PurePosixPath, bytes], epoch: int, executable: bool = False) -> bytes:
    buffer = io.BytesIO()
    folders: set[PurePosixPath] = set()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for target in sorted(placed):
            for folder in [*reversed(target.parents)][1:]:
                if folder not in folders:
                    folders.add(folder)
                    tar.addfile(_entry(folder, tarfile.DIRTYPE, FOLDER_MODES.get(folder, 0o755),
                                       0, epoch))
            content = placed[target]
            mode = 0o755 if executable else 0o644
            tar.addfile(_entry(target, tarfile.REGTYPE, mode, len(content), epoch),
                        io.BytesIO(content))
    return buffer.getvalue()


def _entry(path: PurePosixPath, kind: bytes, mode: int, size: int,
           epoch: int) -> tarfile.TarInfo:
    entry = tarfile.TarInfo(path.as_posix().lstrip("/"))
    entry.type, entry.mode, entry.size, entry.mtime = kind, mode, size, epoch
    entry.uid = entry.gid = 0
    entry.uname = entry.gname = "root"
    return entry
