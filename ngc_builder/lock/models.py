"""The lock of a release: per image, every Python and Debian package it installs, with the
exact file and its sha256. Written by `ngc-builder lock`, reviewed in git, installed as is.

The format keeps one package per line, so a review reads the diff as "numpy 2.3.4 -> 2.3.5".
It names no URL: files are found by name and hash in the host's indexes and mirror, and
served to builds from the package cache.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import DATA_LIMIT, read_text
from ngc_builder.lock.where import value_line
from ngc_builder.manifest.paths import lock_path as lock_path
from ngc_builder.manifest.platforms import HOST_PLATFORM, OtherPlatform

LOCK_FORMAT = 1
T = TypeVar("T")
SHA256_RE = r"^[0-9a-f]{64}$"
# What lands in a Dockerfile or a requirements file from the lock: no shell syntax, no spaces
# (pydantic's patterns search, so each is anchored).
FILE_RE = r"^[A-Za-z0-9][A-Za-z0-9._+~%:-]*(/[A-Za-z0-9][A-Za-z0-9._+~%:-]*)*$"
VERSION_RE = r"^[A-Za-z0-9][A-Za-z0-9.+~:_!-]*$"
DEB_NAME_RE = r"^[a-z0-9][a-z0-9+.-]*$"  # Debian's package names (binary and source)


class Locked(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PipPackage(Locked):
    """One wheel exactly: the file pip chose for the image's Python and platform."""

    name: str = Field(pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")  # PEP 503 normalised
    version: str = Field(pattern=VERSION_RE)
    file: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*\.whl$")
    sha256: str = Field(pattern=SHA256_RE)

    def requirement(self) -> str:
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


class AptPackage(Locked):
    """One .deb exactly: `file` is its path in the Debian archive (`pool/main/...`)."""

    name: str = Field(pattern=DEB_NAME_RE)
    version: str = Field(pattern=VERSION_RE)
    arch: str = Field(pattern=r"^[a-z0-9-]+$")
    file: str = Field(pattern=FILE_RE)
    sha256: str = Field(pattern=SHA256_RE)
    size: int = Field(ge=0)

    def pin(self) -> str:
        return f"{self.name}={self.version}"


class ImageLock(Locked):
    """What one image adds on top of its parent. `inputs` is what was resolved (requirements,
    Debian packages, target, the parent's lock): a lock whose inputs differ is stale."""

    inputs: dict[str, list[str]]
    pip: list[PipPackage] = Field(default_factory=list)
    apt: list[AptPackage] = Field(default_factory=list)
    # Set when the image cannot be resolved: only an expect_failure row may have one (a lock
    # that gives one to another image is refused, lock/inputs.py); the build fails with it.
    error: str | None = None


class OsLock(Locked):
    """Every package of an OS base (what debootstrap's minbase gave when it was locked): the
    OS image is rebuilt from exactly these, with its files' times clamped to `epoch`."""

    suite: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    epoch: int = Field(ge=0)  # SOURCE_DATE_EPOCH of the rootfs: fixed when locked
    apt: list[AptPackage]

    @property
    def architecture(self) -> str:
        """Debian's name of the machine its packages are for (`amd64`, `arm64`)."""
        return (sorted({p.arch for p in self.apt} - {"all"}) or ["amd64"])[0]

    def digest(self) -> str:
        rows = [self.suite, str(self.epoch), *(f"{p.pin()} {p.sha256}" for p in self.apt)]
        return hashlib.sha256("\n".join(rows).encode()).hexdigest()


class PlatformLock(Locked):
    """Another platform's closure (`linux/arm64`): the images that ship it and their OS
    bases, resolved for its machine at the top level's versions."""

    images: dict[str, ImageLock]
    os: dict[str, OsLock] = Field(default_factory=dict)


class ReleaseLock(Locked):
    format: int = LOCK_FORMAT
    release: str
    images: dict[str, ImageLock]  # linux/amd64, the build host's platform
    os: dict[str, OsLock] = Field(default_factory=dict)  # OS base name -> its packages
    platforms: dict[str, PlatformLock] = Field(default_factory=dict)  # the other platforms

    @field_validator("platforms")
    @classmethod
    def _known_platforms(cls, value: dict[str, PlatformLock]) -> dict[str, PlatformLock]:
        strangers = sorted(set(value) - set(get_args(OtherPlatform)))
        if strangers:
            raise ValueError(f"{strangers[0]!r} is not a platform a lock holds besides "
                             f"{HOST_PLATFORM} ({', '.join(get_args(OtherPlatform))})")
        return value

    def for_image(self, name: str) -> ImageLock | None:
        return self.images.get(name)

    def as_platform(self, platform: str) -> ReleaseLock:
        """The lock as if `platform` were the only one (its images and OS bases)."""
        closure = self.of_platform(platform)
        return ReleaseLock(release=self.release, images=closure.images, os=closure.os)

    def of_platform(self, platform: str) -> PlatformLock:
        """The images and OS bases of `platform` (the top level's for the host's own)."""
        if platform == HOST_PLATFORM:
            return PlatformLock(images=self.images, os=self.os)
        return self.platforms.get(platform) or PlatformLock(images={})


def load_lock(path: Path) -> ReleaseLock | None:
    """The lock at `path`, None when there is none; a damaged lock is an input error."""
    try:
        text = read_text(path, DATA_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as exc:  # the reason alone: the file is named already
        raise InputError([Problem(str(path), 1, "lock", exc.strerror or str(exc))]) from None
    except UnicodeDecodeError:
        raise InputError([Problem(str(path), 1, "lock", "not UTF-8 text")]) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", 1)
        raise InputError([Problem(str(path), line, "lock", f"not JSON: {exc}")]) from None
    if isinstance(data, dict) and data.get("format", LOCK_FORMAT) != LOCK_FORMAT:
        # A newer (or made-up) format is not read as this one: its fields may mean otherwise.
        raise InputError([Problem(str(path), value_line(text, ["format"]), "format",
                                  f"{data['format']!r} is not a lock format this ngc-builder "
                                  f"reads ({LOCK_FORMAT}): lock again, or update ngc-builder")])
    try:
        return ReleaseLock.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors()[:20]:
            where = ".".join(str(part) for part in error["loc"])
            problems.append(Problem(str(path), value_line(text, error["loc"]), where or "lock",
                                    error["msg"]))
        raise InputError(problems) from None


def dump_lock(lock: ReleaseLock) -> str:
    """JSON with one package per line, keys sorted: stable bytes for the same lock (a lock
    of linux/amd64 alone has no `platforms` key: its bytes are those of format 1 before it)."""
    lines = ["{", f'  "format": {lock.format},', f'  "release": {json.dumps(lock.release)},',
             *_closure_lines(PlatformLock(images=lock.images, os=lock.os), "  ")]
    if lock.platforms:
        lines[-1] += ","
        lines += ['  "platforms": {', *_keyed(lock.platforms, "    ", _closure_lines), "  }"]
    return "\n".join([*lines, "}"]) + "\n"


def _closure_lines(closure: PlatformLock, pad: str) -> list[str]:
    return [f'{pad}"images": {{', *_keyed(closure.images, pad + "  ", _image_lines),
            f"{pad}}},", f'{pad}"os": {{', *_keyed(closure.os, pad + "  ", _os_lines), f"{pad}}}"]


def _keyed(entries: Mapping[str, T], pad: str,
           lines_of: Callable[[T, str], list[str]]) -> list[str]:
    """`"name": {...}` per entry, sorted by name, comma-separated."""
    names = sorted(entries)
    lines: list[str] = []
    for index, name in enumerate(names):
        comma = "," if index < len(names) - 1 else ""
        lines += [f"{pad}{json.dumps(name)}: {{", *lines_of(entries[name], pad + "  "),
                  f"{pad}}}{comma}"]
    return lines


def _os_lines(entry: OsLock, pad: str) -> list[str]:
    rows = [f"{pad}  {_one_line(p.model_dump())}" for p in entry.apt]
    return [f'{pad}"suite": {json.dumps(entry.suite)},', f'{pad}"epoch": {entry.epoch},',
            f'{pad}"apt": [\n' + ",\n".join(rows) + f"\n{pad}]"]


def _image_lines(image: ImageLock, pad: str) -> list[str]:
    fields: list[str] = [f'{pad}"inputs": {_one_line(image.inputs)}']
    if image.error is not None:
        fields.append(f'{pad}"error": {json.dumps(image.error)}')
    for kind, packages in (("pip", image.pip), ("apt", image.apt)):
        rows = [f"{pad}  {_one_line(p.model_dump())}" for p in packages]
        fields.append(f'{pad}"{kind}": [\n' + ",\n".join(rows) + f"\n{pad}]" if rows
                      else f'{pad}"{kind}": []')
    return [f"{field}," for field in fields[:-1]] + fields[-1:]


def _one_line(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(", ", ": "))


def normalise(name: str) -> str:
    """PEP 503: runs of -_. become one '-', lower case."""
    return re.sub(r"[-_.]+", "-", name).lower()
