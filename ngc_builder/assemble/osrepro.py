"""A reproducible OS base: the rootfs made from a locked list of .debs, loaded as an image
whose ID depends only on that list, the suite, the mirror line and SOURCE_DATE_EPOCH.

debootstrap + `docker import` give a new image ID on every run: newest versions on the
mirror, files stamped with the time of the run, and a `created` of now in the config. Here
mmdebstrap installs exactly the locked files from a flat repository in scratch (it honours
SOURCE_DATE_EPOCH), the tarball is rewritten in a canonical form, and the image is loaded
from a docker-archive we write ourselves, so the config (and so the ID) is ours byte for byte.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path

import docker.errors

from ngc_builder.assemble.imageconfig import epoch_time
from ngc_builder.cache.apt_repo import cache_file, packages_index, read_stanza, repo_path
from ngc_builder.cache.store import file_sha256
from ngc_builder.errors import StepError
from ngc_builder.lock.apt import (
    STEP,
    error_line,
    packages_by_pin,
    parse_sections,
    parse_stanzas,
    run_script,
)
from ngc_builder.lock.models import AptPackage
from ngc_builder.services.engine import Engine
from ngc_builder.services.streams import LineSink, StreamError, consume_pull

Installed = tuple[str, str, str]  # name, version, architecture
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
INSTALLED_SH = "dpkg-query -W -f='${db:Status-Status} ${Package} ${Version} ${Architecture}\\n'"
# Written by the run, not by any package: logs, caches, backups of dpkg's and debconf's
# databases, the host's resolver and name (Docker mounts its own), device nodes (the
# engine makes /dev), bytecode (Python rewrites it; its bytes can vary between runs).
DROPPED = (
    "dev/*", "etc/resolv.conf", "etc/hostname", "var/log/*.log", "var/log/apt/*",
    "var/lib/dbus/machine-id", "var/cache/ldconfig/aux-cache", "var/lib/dpkg/*-old",
    "var/cache/debconf/*-old", "var/cache/apt/*.bin", "var/cache/apt/archives/*.deb",
    "var/lib/apt/lists/*_*", "*/__pycache__/*.pyc",
)
KEPT_XATTRS = "SCHILY.xattr."  # file capabilities and ACLs; times and names are rewritten
# debootstrap's merged /usr, which the OS images it made have (bullseye's included): the
# top folders are links into /usr before anything is unpacked. Trixie's base-files ships the
# same links; bookworm's usr-is-merged refuses to install without them.
MERGED_USR = {"amd64": "bin sbin lib lib64"}
LOCK_SH = "\n".join([
    'mark() { echo "@@ngc $*"; }',
    f"mark installed; {INSTALLED_SH}; mark rc $?",
    # --error-on=any: an unreachable mirror is an error, not a list of missing versions
    "mark update; apt-get update -q --error-on=any 2>&1; rc=$?; mark rc $rc",
    '[ "$rc" -eq 0 ] || exit 0',
    "mark show; apt-cache show --no-all-versions $(dpkg-query -W -f='${db:Status-Status} "
    "${Package}=${Version}\\n' | sed -n 's/^installed //p') 2>&1; mark rc $?",
]) + "\n"


def os_packages(engine: Engine, os_ref: str) -> list[Installed]:
    """What `os_ref` holds: every installed package as (name, version, architecture)."""
    script = f'echo "@@ngc installed"; {INSTALLED_SH}; echo "@@ngc rc $?"\n'
    sections = parse_sections(run_script(engine, os_ref, script))
    return parse_installed(sections["installed"].lines) if "installed" in sections else []


def parse_installed(lines: list[str]) -> list[Installed]:
    """(name, version, arch) of each `installed` line of INSTALLED_SH, sorted; packages dpkg
    only remembers (config files left, half-installed) are not part of the image's set."""
    rows = [line.split() for line in lines]
    return sorted((row[1], row[2], row[3]) for row in rows
                  if len(row) == 4 and row[0] == "installed")


def locked_os_packages(engine: Engine, os_ref: str, sink: LineSink) -> list[AptPackage]:
    """Every package `os_ref` holds, at its installed version, with the archive file and
    sha256 that the image's own apt sources give for that version (one container)."""
    sink(f"locking the packages of {os_ref}")
    sections = parse_sections(run_script(engine, os_ref, LOCK_SH))
    update = sections.get("update")
    if update is None or update.code != 0:
        raise StepError(os_ref, STEP, "apt-get update failed: "
                        f"{error_line(update.lines) if update else 'no output'}")
    if "installed" not in sections or "show" not in sections:
        raise StepError(os_ref, STEP, "the lock script stopped before apt-cache show")
    locked = match_installed(os_ref, parse_installed(sections["installed"].lines),
                             parse_stanzas(sections["show"].lines))
    sink(f"{os_ref}: {len(locked)} package(s) locked")
    return locked


def match_installed(os_ref: str, installed: list[Installed],
                    stanzas: list[dict[str, str]]) -> list[AptPackage]:
    """The archive record of each installed version; StepError naming each one the mirror
    lacks (a point release replaced it: lock right after bootstrapping, or use a snapshot)."""
    records = packages_by_pin(stanzas)
    found = {(name, version, arch): records.get(f"{name}={version}")
             for name, version, arch in installed}
    missing = [f"{key[0]}={key[1]}" for key, record in found.items()
               if record is None or record.arch != key[2]]
    if missing:
        raise StepError(os_ref, STEP, f"the image's mirror has no file for {', '.join(missing)}")
    return sorted((r for r in found.values() if r), key=lambda p: (p.name, p.version, p.arch))


def reproducible_rootfs(packages: list[AptPackage], debs: Callable[[AptPackage], Path],
                        suite: str, epoch: int, scratch: Path, sink: LineSink, *,
                        mirror: str) -> Path:
    """The normalised layer tarball of a system holding exactly `packages` (each .deb at
    `debs(package)`), with `deb <mirror> <suite> main` as its apt source, as debootstrap
    writes it. Needs root and mmdebstrap; everything it writes stays under `scratch`."""
    if shutil.which("mmdebstrap") is None or os.geteuid() != 0:
        raise StepError("os-base", "rootfs", "needs root and mmdebstrap (apt-get install it)")
    source = flat_repo(packages, debs, scratch / "repo")
    raw = scratch / "mmdebstrap.tar"
    command = mmdebstrap_command(packages, suite, source, raw)
    sink(f"mmdebstrap {suite}: {len(packages)} locked package(s), SOURCE_DATE_EPOCH={epoch}")
    env = {"PATH": PATH, "LC_ALL": "C", "SOURCE_DATE_EPOCH": str(epoch),
           "TMPDIR": str(scratch)}  # its chroot goes to scratch, not the host's /tmp
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    for line in done.stderr.splitlines()[-3:]:
        sink(line)
    if done.returncode != 0:
        raise StepError("os-base", "mmdebstrap",
                        f"exit {done.returncode}: {error_line(done.stderr.splitlines())}")
    tarball = scratch / "rootfs.tar"
    sources = f"deb {mirror.rstrip('/')} {suite} main\n".encode()
    normalise_tar(raw, tarball, epoch, {"etc/apt/sources.list": sources, "etc/machine-id": b""})
    raw.unlink()
    return tarball


def flat_repo(packages: list[AptPackage], debs: Callable[[AptPackage], Path],
              root: Path) -> str:
    """Lay out the cache's flat repository of `packages` under `root` (links to the .debs)
    and return its sources.list line. `copy:`, not `file:`: apt then copies each .deb into
    the chroot, so the repository need not be visible inside it; apt still checks every
    file against the SHA256 of the Packages file, written here from the lock."""
    entries: list[tuple[AptPackage, str]] = []
    for package in packages:
        deb = debs(package)
        target = root / cache_file(package)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            try:
                os.link(deb, target)
            except OSError:  # another filesystem
                shutil.copyfile(deb, target)
        entries.append((package, read_stanza(deb, "os-base", "bootstrap")))
    repo = repo_path(packages)
    (root / repo).mkdir(parents=True, exist_ok=True)
    (root / repo / "Packages").write_text(packages_index(entries), encoding="utf-8")
    return f"deb [trusted=yes] copy://{root.resolve()} {repo}"


def mmdebstrap_command(packages: list[AptPackage], suite: str, source: str,
                       output: Path) -> list[str]:
    """`custom`: install what is named and nothing else (no Priority or Essential pick),
    by exact version; `root` mode always (its output is what was measured reproducible)."""
    arch = (sorted({p.arch for p in packages} - {"all"}) or ["amd64"])[0]
    pins = ",".join(sorted(p.pin() for p in packages))
    links = (f'for d in {MERGED_USR.get(arch, "bin sbin lib")}; do mkdir -p "$1/usr/$d"; '
             'ln -s "usr/$d" "$1/$d"; done')
    return ["mmdebstrap", "--mode=root", "--variant=custom", f"--architectures={arch}",
            f"--include={pins}", f"--setup-hook={links}", "--format=tar", suite, str(output),
            source]


def normalise_tar(source: Path, target: Path, epoch: int,
                  rewrites: dict[str, bytes]) -> None:
    """Rewrite the tarball at `source` canonically: members sorted by path, times clamped
    to `epoch`, numeric owners without names, only xattrs kept of the PAX records, DROPPED
    paths left out and the files in `rewrites` (paths without `./`) given new contents."""
    with tarfile.open(source, "r:") as tar:
        members = {m.name: m for m in tar.getmembers() if not _dropped(_path(m.name))}
        order = sorted(members, key=_sort_key)
        leaders = _hardlink_leaders([members[name] for name in order])
        with tarfile.open(target, "w:", format=tarfile.PAX_FORMAT) as out:
            for name in order:
                info, data = _canonical(tar, members[name], leaders, epoch, rewrites)
                out.addfile(info, data)


def _path(name: str) -> str:
    return name[2:] if name.startswith("./") else name.lstrip("/")


def _dropped(path: str) -> bool:
    return any(fnmatchcase(path, pattern) for pattern in DROPPED)


def _sort_key(name: str) -> tuple[str, ...]:
    # Per component, so a folder comes right before what it holds ("a", "a/b", "a-b").
    return tuple(_path(name).split("/"))


def _hardlink_leaders(ordered: list[tarfile.TarInfo]) -> dict[str, tuple[str, str]]:
    """name -> (the group's first name in order, the member that holds the data), for every
    name of a hard-link group: the first in canonical order must carry the contents."""
    groups: dict[str, list[str]] = {}
    for member in ordered:
        if member.islnk():
            groups.setdefault(member.linkname, []).append(member.name)
    kept = {member.name for member in ordered}
    leaders: dict[str, tuple[str, str]] = {}
    for holder, links in groups.items():
        names = sorted([*links, holder] if holder in kept else links, key=_sort_key)
        leaders.update({name: (names[0], holder) for name in names})
    return leaders


def _canonical(tar: tarfile.TarFile, member: tarfile.TarInfo,
               leaders: dict[str, tuple[str, str]], epoch: int,
               rewrites: dict[str, bytes]) -> tuple[tarfile.TarInfo, io.BytesIO | None]:
    info = tarfile.TarInfo(member.name)
    info.mode, info.uid, info.gid = member.mode, member.uid, member.gid
    info.mtime = min(int(member.mtime), epoch)
    info.type, info.linkname = member.type, member.linkname
    info.devmajor, info.devminor = member.devmajor, member.devminor
    info.pax_headers = {k: v for k, v in member.pax_headers.items()
                        if k.startswith(KEPT_XATTRS)}
    leader = leaders.get(member.name)
    if leader is not None and leader[0] != member.name:
        info.type, info.linkname = tarfile.LNKTYPE, leader[0]
        return info, None
    holder = tar.getmember(leader[1]) if leader is not None else member
    if holder.isreg():
        info.type, info.linkname = tarfile.REGTYPE, ""
        extracted = tar.extractfile(holder)
        assert extracted is not None  # a regular file always has contents
        data = rewrites.get(_path(member.name), extracted.read())
        info.size = len(data)
        return info, io.BytesIO(data)
    return info, None


def image_config(diff_id: str, epoch: int, labels: dict[str, str],
                 architecture: str = "amd64") -> bytes:
    """The image config, as canonical JSON bytes: its sha256 is the image ID."""
    created = epoch_time(epoch)
    config = {
        "architecture": architecture, "os": "linux", "created": created,
        "config": {"Env": [f"PATH={PATH}"], "Cmd": ["/bin/bash"], "Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": created,
                     "created_by": "ngc-builder: rootfs of a locked package set"}],
    }
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def write_archive(tarball: Path, config: bytes, ref: str, archive: Path, epoch: int) -> None:
    """A docker-archive, as `docker save` writes it: the layer named by its diff_id, the
    config by the image ID, and `manifest.json` tagging them `ref`."""
    layer = f"{json.loads(config)['rootfs']['diff_ids'][0].removeprefix('sha256:')}/layer.tar"
    config_name = f"{hashlib.sha256(config).hexdigest()}.json"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [ref], "Layers": [layer]}])
    with tarfile.open(archive, "w:", format=tarfile.PAX_FORMAT) as out, tarball.open("rb") as data:
        out.addfile(_entry(layer.split("/")[0], epoch, tarfile.DIRTYPE))
        out.addfile(_entry(layer, epoch, size=tarball.stat().st_size), data)
        for name, text in ((config_name, config), ("manifest.json", manifest.encode())):
            out.addfile(_entry(name, epoch, size=len(text)), io.BytesIO(text))


def _entry(name: str, epoch: int, kind: bytes = tarfile.REGTYPE, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mtime = kind, size, epoch
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info


def load_rootfs(engine: Engine, tarball: Path, ref: str, labels: dict[str, str], epoch: int,
                sink: LineSink | None = None, architecture: str = "amd64") -> str:
    """Load `tarball` as the one layer of image `ref` (`Env PATH`, `Cmd /bin/bash`, `labels`,
    created at `epoch`) and return its ID, which is the sha256 of the config we wrote."""
    config = image_config(f"sha256:{file_sha256(tarball)}", epoch, labels, architecture)
    expected = f"sha256:{hashlib.sha256(config).hexdigest()}"
    with tempfile.TemporaryDirectory(prefix="ngc-load-", dir=tarball.parent) as scratch:
        archive = Path(scratch) / "image.tar"
        write_archive(tarball, config, ref, archive, epoch)
        try:
            with archive.open("rb") as data:
                consume_pull(engine.api.load_image(data), sink or (lambda line: None))
        except (StreamError, docker.errors.APIError) as exc:
            raise StepError("os-base", "docker load", str(exc).strip()) from None
    found = str(engine.api.inspect_image(ref)["Id"])
    if found != expected:  # an engine whose store re-encodes configs (containerd's)
        raise StepError("os-base", "docker load", f"{ref} is {found}, expected {expected}")
    return found
