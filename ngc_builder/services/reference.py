"""Docker's grammar of image references, in one place: a registry (host[:port][/namespace]), a
repository path, a tag, a sha256 digest. What a person types, what the manifest names, and
what an engine or a registry answers (tags, digests) are all held to it before any of them
becomes a URL, a path or an argument of a command.

Stdlib only: the Slurm and GPU-node paths import it.
"""

from __future__ import annotations

import re

REGISTRY_RE = re.compile(
    r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
)
DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
TAG_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
PATH_RE = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)"
                     r"[a-z0-9]+)*)*")
# The names of the release's images and frameworks: each becomes a repository path and a
# folder (frameworks/<name>), whether the manifest, a person or an image's label gives it.
NAME_RE = re.compile(r"[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?")
# Docker's own bounds: a name of 255 characters, a tag of 128, a sha256 digest of 71.
MAX_REFERENCE = 512


def name_problem(value: str) -> str | None:
    """Why `value` cannot be an image's or a framework's name (the manifest's rule, with the
    manifest's words), or None."""
    if len(value) > MAX_REFERENCE:
        return f"a name of {len(value)} characters (the limit is {MAX_REFERENCE})"
    if not NAME_RE.fullmatch(value):
        return f"{value!r} is not a valid name (lower-case a-z 0-9 . _ -)"
    return None


class BadReference(ValueError):
    """A reference that names no image (bad input, exit 2); its text says why."""


def split_registry(address: str) -> tuple[str, str]:
    """'host:5000/team' -> ('host:5000', 'team')."""
    host, _, namespace = address.partition("/")
    return host, namespace


def registry_problem(address: str) -> str | None:
    """Why `address` cannot be a registry (host[:port][/namespace]) Docker accepts, or None."""
    if len(address) > 255:  # a DNS name is at most 253 characters
        return f"a registry of {len(address)} characters (at most 255)"
    if not REGISTRY_RE.fullmatch(address):
        return f"{address!r} is not a valid registry (host[:port][/namespace])"
    host = split_registry(address)[0]
    port = host.rpartition(":")[2] if ":" in host else ""
    if port and not 0 < int(port) < 65536:
        return f"port {port} of {address!r} is out of range (1-65535)"
    return None


def split_reference(text: str) -> tuple[str, str, str, str]:
    """(registry host or '', repository path, tag or '', digest or '') as Docker reads a
    reference: the first component is a host only if it has a '.' or ':' or is 'localhost'.
    Bounded and split only; `check_parts` holds each part to its grammar."""
    if len(text) > MAX_REFERENCE:
        raise BadReference(f"longer than {MAX_REFERENCE} characters (the limit)")
    if "://" in text:
        raise BadReference("a reference has no scheme: host[:port]/repository:tag")
    name, at, digest = text.partition("@")
    if at and not DIGEST_RE.fullmatch(digest):
        raise BadReference("a digest is sha256: and 64 lowercase hex digits")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""  # name:tag@digest: both kept
    name = name[: len(name) - len(tag) - 1] if tag else name
    host, slash, path = name.partition("/")
    if not slash or not ("." in host or ":" in host or host == "localhost"):
        host, path = "", name
    return host, path, tag, digest


def check_parts(host: str, path: str, tag: str) -> None:
    """BadReference unless the registry, the repository and the tag are Docker's."""
    if (host and registry_problem(host)) or not PATH_RE.fullmatch(path):
        raise BadReference("not a valid image reference (host[:port]/repository:tag)")
    if tag and not TAG_RE.fullmatch(tag):
        raise BadReference(f"{tag!r} is not a valid tag")


def reference_problem(text: str) -> str | None:
    """Why `text` is not an image reference Docker accepts (the registry may be left out, as
    in the engine's own tags), or None. None also means no command can read it as an option
    (no part starts with '-') or as two arguments, and no part is '..'."""
    try:
        host, path, tag, _ = split_reference(text)
        check_parts(host, path, tag)
    except BadReference as exc:
        return str(exc)
    return None
