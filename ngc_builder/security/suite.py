"""A Debian security suite as the archive serves it (`<codename>-security`): its `InRelease`
checked by gpgv against Debian's archive keyring, then one architecture's `Packages.xz`,
checked against the size and SHA256 that the signed file lists.

Each answer is hostile until checked: a signature gpgv does not accept, a signed file past the
`Valid-Until` it sets (an old index replayed to hide a fix), another codename than asked for,
an index of another size or hash, or one that decompresses past its bound is refused, naming
the URL.
"""

from __future__ import annotations

import hashlib
import lzma
import re
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

import requests
from pydantic import ValidationError

from ngc_builder.errors import StepError
from ngc_builder.lock.debian import control_fields
from ngc_builder.lock.models import DEB_NAME_RE, VERSION_RE, AptPackage
from ngc_builder.services.mirror import host_security_mirror

DEFAULT_MIRROR = "http://deb.debian.org/debian-security"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")  # Debian's debian-archive-keyring
RELEASE_LIMIT = 4 * 1024 * 1024
INDEX_LIMIT = 256 * 1024 * 1024  # a decompressed Packages file (bookworm-security's: 2.6 MB)
SHA256_RE = re.compile(r"[0-9a-f]{64}")
STEP = "security suite"
SECURITY_POOL = "pool/updates/"  # where Debian's security archive keeps its .debs


@dataclass(frozen=True)
class SuitePackage:
    """One .deb the suite offers (the newest of its name and architecture)."""

    name: str
    version: str
    arch: str
    source: str  # the source package, whose changelog names the fixes
    file: str  # its path under the mirror (`pool/updates/main/...`)
    sha256: str
    size: int


def security_mirror() -> str:
    """Where the security suites are: NGC_DEBIAN_SECURITY_MIRROR, else this host's apt's,
    else Debian's own (the signature check is the same whichever answers)."""
    return (host_security_mirror() or DEFAULT_MIRROR).rstrip("/")


def signed_release(session: requests.Session, mirror: str, codename: str,
                   keyring: Path = KEYRING, today: datetime | None = None) -> dict[str, str]:
    """The fields of the suite's InRelease, once gpgv accepts its signature."""
    url = f"{mirror}/dists/{codename}/InRelease"
    signed = _get(session, url, RELEASE_LIMIT)
    fields = control_fields(_verified(url, signed, keyring))
    if fields.get("Codename") != codename:
        raise StepError(url, STEP, f"signed for {fields.get('Codename')!r}, not {codename!r}")
    _still_valid(url, fields.get("Valid-Until", ""), today or datetime.now(UTC))
    return fields


def _verified(url: str, signed: bytes, keyring: Path) -> str:
    """The text gpgv vouches for (never the bytes around the signature)."""
    with tempfile.NamedTemporaryFile(suffix=".InRelease") as held:
        held.write(signed)
        held.flush()
        try:
            done = subprocess.run(["gpgv", "--keyring", str(keyring), "--output", "-", held.name],
                                  capture_output=True, timeout=60, check=False)
        except FileNotFoundError:
            raise StepError(url, STEP, "gpgv is not installed (Debian's gpgv)") from None
    if done.returncode != 0:
        told = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise StepError(url, STEP, f"signature not accepted by {keyring}: "
                        f"{told[-1] if told else 'gpgv exited ' + str(done.returncode)}")
    return done.stdout.decode("utf-8", "replace")


def _still_valid(url: str, valid_until: str, today: datetime) -> None:
    """apt's rule: a suite that sets Valid-Until is refused past it; one that sets none (a
    suite no longer updated, bullseye-security now) never expires."""
    if not valid_until:
        return
    try:
        until = parsedate_to_datetime(valid_until)
    except (TypeError, ValueError):
        raise StepError(url, STEP, f"no readable Valid-Until ({valid_until[:40]!r})") from None
    if until.tzinfo is None or until <= today:
        raise StepError(url, STEP, f"expired {valid_until} (an old copy replayed?)")


def indexed_file(release: dict[str, str], path: str) -> tuple[str, int] | None:
    """(sha256, size) that the signed release lists for `path`."""
    words = release.get("SHA256", "").split()
    for at in range(0, len(words) - 2, 3):
        digest, size, name = words[at:at + 3]
        if name == path and SHA256_RE.fullmatch(digest) and size.isdigit():
            return digest, int(size)
    return None


def suite_packages(session: requests.Session, mirror: str, codename: str,
                   release: dict[str, str], arch: str) -> list[SuitePackage]:
    """Every package of the suite's main component for `arch`, checked against `release`."""
    path = f"main/binary-{arch}/Packages.xz"
    url = f"{mirror}/dists/{codename}/{path}"
    listed = indexed_file(release, path)
    if listed is None:
        raise StepError(url, STEP, f"the signed InRelease lists no {path}")
    data = _get(session, url, listed[1])
    if len(data) != listed[1] or hashlib.sha256(data).hexdigest() != listed[0]:
        raise StepError(url, STEP, "size or SHA256 differs from the signed InRelease")
    return packages_of(_unxz(url, data))


def _unxz(url: str, data: bytes) -> str:
    unpacker = lzma.LZMADecompressor()
    try:
        text = unpacker.decompress(data, INDEX_LIMIT + 1)
    except lzma.LZMAError as exc:
        raise StepError(url, STEP, f"not xz data: {exc}") from None
    if len(text) > INDEX_LIMIT or not unpacker.eof:
        raise StepError(url, STEP, f"decompresses past {INDEX_LIMIT} bytes")
    return text.decode("utf-8", "replace")


def packages_of(text: str) -> list[SuitePackage]:
    """The stanzas of a Packages file that name a whole .deb (the rest are skipped; the
    fields are held to the lock's patterns when a package is taken, lock/models.py)."""
    found = []
    for stanza in text.split("\n\n"):
        fields = control_fields(stanza)
        if not all(fields.get(key) for key in ("Package", "Version", "Filename", "SHA256")) \
                or not fields.get("Size", "").isdigit():
            continue
        source = fields.get("Source", fields["Package"]).split(" ")[0]
        if not all(re.match(pattern, value) for pattern, value in (
                (DEB_NAME_RE, fields["Package"]), (DEB_NAME_RE, source),
                (VERSION_RE, fields["Version"]))):
            continue  # what every report line prints: never an escape sequence or a newline
        found.append(SuitePackage(fields["Package"], fields["Version"],
                                  fields.get("Architecture", ""), source, fields["Filename"],
                                  fields["SHA256"], int(fields["Size"])))
    return found


def _get(session: requests.Session, url: str, limit: int) -> bytes:
    try:
        with session.get(url, stream=True, timeout=60) as response:
            response.raise_for_status()
            data = response.raw.read(limit + 1, decode_content=True)
    except requests.RequestException as exc:
        told = exc.__class__.__name__ if exc.response is None else \
            f"HTTP {exc.response.status_code}"
        raise StepError(url, STEP, f"cannot fetch: {told}") from None
    if len(data) > limit:
        raise StepError(url, STEP, f"larger than {limit} bytes")
    return bytes(data)


def apt_package(package: SuitePackage) -> AptPackage:
    """The suite's package held to the lock's patterns (its file a pool path, its hash one)."""
    try:
        return AptPackage(name=package.name, version=package.version, arch=package.arch,
                          file=package.file, sha256=package.sha256, size=package.size)
    except ValidationError as exc:
        field = ".".join(str(part) for part in exc.errors()[0]["loc"])
        raise StepError(f"{package.name} {package.version}"[:120], STEP,
                        f"the index's {field} is not one a lock could hold") from None
