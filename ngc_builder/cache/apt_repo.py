"""A flat apt repository per locked package set, served from the package cache.

The cache keeps each .deb at `debs/<sha256>/<name>.deb`; `apt/<hash>/Packages` lists exactly
the locked files, so a build that installs from that one source can only get the locked
versions, and apt checks every .deb it downloads against the SHA256 written here.
"""

from __future__ import annotations

import hashlib
import lzma
import shlex
import tarfile
import zlib
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ngc_builder.cache.address import build_url
from ngc_builder.errors import StepError
from ngc_builder.lock.debian import control_text
from ngc_builder.lock.models import AptPackage

# Fields that describe one copy of a file in one archive: ours replace them.
FILE_FIELDS = frozenset({"filename", "size", "md5sum", "sha1", "sha256", "sha512"})
REPO_HASH_CHARS = 32


class DebError(Exception):
    """A file that is not a .deb this module can read."""


def deb_stanza(deb: Path) -> str:
    """The control stanza of a .deb, as its `control` file has it, ending in one newline.

    Read in Python, not with `dpkg-deb --field`: the build host need not be Debian, and the
    ar container plus a gz/xz control tarball (what the Debian archive ships) is all there
    is to read, by the lock's bounded reader (lock/debian.py: the members before the control
    are skipped, never read). Zstandard members (Ubuntu) are refused with a clear error,
    since Python 3.11's tarfile cannot open them.
    """
    try:
        return control_text(deb).strip("\n") + "\n"
    except ValueError as exc:
        if "zst" in str(exc):
            raise DebError(f"{deb.name}: its control.tar.zst is zstd-compressed, which is not "
                           "supported") from None
        raise DebError(f"{deb.name}: {exc}") from None
    except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as exc:
        # damaged bytes: whatever layer notices, one line naming the file
        raise DebError(f"{deb.name}: damaged .deb ({exc.__class__.__name__})") from None


def read_stanza(deb: Path, image: str, step: str) -> str:
    """deb_stanza, a damaged .deb failing `image`'s `step` (its hash fit a hostile lock)."""
    try:
        return deb_stanza(deb)
    except DebError as exc:
        raise StepError(image, step, str(exc)) from None


def packages_index(entries: list[tuple[AptPackage, str]]) -> str:
    """A `Packages` file: each package's control stanza plus where the cache keeps its file
    and the hash apt must find, sorted by name, version and architecture."""
    unique = {package.sha256: (package, stanza) for package, stanza in entries}
    ordered = sorted(unique.values(), key=lambda entry: _order(entry[0]))
    return "\n".join(_index_stanza(package, stanza) for package, stanza in ordered)


def _order(package: AptPackage) -> tuple[str, str, str]:
    return package.name, package.version, package.arch


def _index_stanza(package: AptPackage, stanza: str) -> str:
    fields = _control_fields(stanza)
    found = (fields.get("package"), fields.get("version"), fields.get("architecture"))
    if found != (package.name, package.version, package.arch):
        raise DebError(f"{package.file}: its control says {'/'.join(map(str, found))}, "
                       f"the lock {package.name}/{package.version}/{package.arch}")
    kept = _without_file_fields(stanza.strip("\n").splitlines())
    return "\n".join([*kept, f"Filename: {cache_file(package)}", f"Size: {package.size}",
                      f"SHA256: {package.sha256}"]) + "\n"


def _control_fields(stanza: str) -> dict[str, str]:
    """The one-line value of each field (continuation lines ignored), keys lower-cased."""
    fields: dict[str, str] = {}
    for line in stanza.splitlines():
        if line and not line[0].isspace() and ":" in line:
            key, value = line.split(":", 1)
            fields[key.strip().lower()] = value.strip()
    return fields


def _without_file_fields(lines: list[str]) -> list[str]:
    kept: list[str] = []
    dropping = False
    for line in lines:
        if line and not line[0].isspace():
            dropping = line.split(":", 1)[0].strip().lower() in FILE_FIELDS
        if not dropping:
            kept.append(line)
    return kept


def cache_file(package: AptPackage) -> str:
    """Where the cache keeps the .deb, relative to its root (and so to the repository URI)."""
    return f"debs/{package.sha256}/{PurePosixPath(package.file).name}"


def repo_path(packages: list[AptPackage]) -> str:
    """`apt/<hash>/`: named by the locked set itself, so the Dockerfile that names it changes
    exactly when the set does, and two images with the same set share one repository."""
    lines = sorted({f"{p.pin()} {p.arch} {p.sha256}" for p in packages})
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
    return f"apt/{digest[:REPO_HASH_CHARS]}/"


def install_command(repo: str, packages: list[AptPackage], requested: list[str]) -> str:
    """The shell text of a Dockerfile `RUN` that installs `requested` from the cache only.

    `[trusted=yes]`: the repository is unsigned (we write its Packages file from the lock), so
    whoever answers as the cache could serve an index and .debs of its choosing. The locked
    sha256s are therefore in the step itself: apt only downloads, every downloaded .deb is
    held against them and one that differs fails the step, naming the package, before dpkg
    runs (as pip's --require-hashes does). The image's own sources stay untouched (users keep
    their Debian mirror): this source lives in a temporary directory named by -o options, and
    it goes, with the lists and apt's binary caches that would carry the cache URL, before
    the step ends.
    """
    pins = _requested_pins(packages, requested)
    # Only our list: SourceParts names an empty directory, so the image's sources.list.d
    # (trixie's deb822 debian.sources) is not read. No SRV lookup: `ngc-cache` lives only in
    # /etc/hosts, and once netbase is installed apt asks DNS for _http._tcp.ngc-cache, which
    # costs a 10 s timeout per connection on a build network without DNS (measured).
    options = ('o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts '
               '-o Acquire::EnableSrvRecords=false"')
    source = shlex.quote(f"deb [trusted=yes] {build_url()} {repo}")
    steps = [
        "set -e",
        'd="$(mktemp -d)"',
        'mkdir "$d/parts"',
        f'echo {source} > "$d/cache.list"',
        options,
        # --error-on=any: an unreadable repository fails here, not later as "Unable to locate"
        "apt-get $o update --error-on=any",
        "set --" + _listed(shlex.quote(pin) for pin in pins),
        "rm -f /var/cache/apt/archives/*.deb",
        'DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends '
        '--download-only "$@"',
        *verify_downloaded(packages),
        'DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"',
        verify_installed(packages),
        # The lists, not apt's `lock` and `partial/` the OS image holds: removing those would
        # leave whiteouts in the layer, dated the time of the build (render/repro.py).
        'rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb',
        "find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial "
        "-exec rm -rf {} +",
    ]
    return "; \\\n    ".join(steps)


def _listed(words: Iterable[str]) -> str:
    """One word per line, so a reviewer reads the locked set in the Dockerfile as in the lock."""
    return "".join(f" \\\n        {word}" for word in words)


def _requested_pins(packages: list[AptPackage], requested: list[str]) -> list[str]:
    """Pins of the requested names this lock holds. A name it lacks was installed by a parent
    image (the lock was resolved from these names on top of it): nothing to pin or fetch."""
    locked = {p.name: p for p in packages}
    return [locked[name].pin() for name in sorted(set(requested)) if name in locked]


def verify_downloaded(packages: list[AptPackage]) -> list[str]:
    """Fail the step unless every .deb apt downloaded has a locked sha256, naming the package
    by its file name (apt's `name_version_arch.deb`): nothing reached dpkg yet."""
    hashes = _listed(sorted({p.sha256 for p in packages}))
    # The name comes from whoever served the index: the file is hashed from stdin (sha256sum
    # escapes a name with a backslash, hash and all) and the name printed by printf's %s
    # (dash's echo reads `\n` and `\c` in it, forging or cutting the refusal).
    check = ('[ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; '
             'grep -qxF "$s" "$d/sha256" || { printf \'ngc-builder: %s: sha256 %s is not '
             'the locked one: refused before dpkg\\n\' "${n%%_*}" "$s" >&2; exit 1; }')
    return [f'printf \'%s\\n\'{hashes} > "$d/sha256"',
            f"for f in /var/cache/apt/archives/*.deb; do \\\n        {check}; done"]


def verify_installed(packages: list[AptPackage]) -> str:
    """Fail the step unless every locked package is installed at exactly its version: the
    image's own packages or another source must not have stood in for a locked one."""
    pins = _listed(shlex.quote(p.pin()) for p in sorted(packages, key=_order))
    check = ("n=${p%%=*}; v=${p#*=}; "
             "f=\"$(dpkg-query -W -f='${db:Status-Status} ${Version}' \"$n\" 2>/dev/null "
             "|| true)\"; "
             '[ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found '
             '${f:-not installed}" >&2; exit 1; }')
    return f"for p in{pins}; do \\\n        {check}; done"
