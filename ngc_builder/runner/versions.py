"""Just enough PEP 440 / PEP 503 to compare versions and names without ``packaging``.

The runner ships into images that may not have ``packaging`` installed, so this is stdlib only.
Only equality is needed: expectations pin exact versions.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_VERSION_RE = re.compile(
    r"""
    ^\s*v?
    (?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>alpha|beta|preview|pre|rc|a|b|c)[-_.]?(?P<pre_n>\d+)?)?
    (?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PRE_ALIASES = {"alpha": "a", "beta": "b", "c": "rc", "pre": "rc", "preview": "rc"}


class Version(NamedTuple):
    epoch: int
    release: tuple[int, ...]  # trailing zeros stripped, so 1.0 == 1.0.0
    pre: tuple[str, int] | None
    post: int | None
    dev: int | None
    local: str | None

    @property
    def public(self) -> tuple[object, ...]:
        return (self.epoch, self.release, self.pre, self.post, self.dev)


def normalize_name(name: str) -> str:
    """PEP 503 name normalisation: ``NVIDIA_cublas.cu13`` -> ``nvidia-cublas-cu13``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_version(text: str) -> Version | None:
    """Parse a PEP 440-ish version; None when it is not one (callers then compare as text)."""
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    release = tuple(int(part) for part in match["release"].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    return Version(
        epoch=int(match["epoch"] or 0),
        release=release,
        pre=_pre(match["pre_l"], match["pre_n"]),
        post=_post(match["post_n1"], match["post_l"], match["post_n2"]),
        dev=None if match["dev_l"] is None else int(match["dev_n"] or 0),
        local=None if match["local"] is None else re.sub(r"[-_]", ".", match["local"].lower()),
    )


def _pre(label: str | None, number: str | None) -> tuple[str, int] | None:
    if label is None:
        return None
    label = label.lower()
    return (_PRE_ALIASES.get(label, label), int(number or 0))


def _post(implicit: str | None, label: str | None, number: str | None) -> int | None:
    if implicit is not None:
        return int(implicit)
    return None if label is None else int(number or 0)


def versions_equal(installed: str, expected: str) -> bool:
    """PEP 440 ``==`` semantics: a local label (``+cpu``) only matters if ``expected`` has one."""
    have, want = parse_version(installed), parse_version(expected)
    if have is None or want is None:
        return installed.strip().lower() == expected.strip().lower()
    if have.public != want.public:
        return False
    return want.local is None or have.local == want.local


def release_components(text: str) -> tuple[int, ...]:
    """The numeric release components as written (no zero stripping): ``13.2.86`` -> (13, 2, 86)."""
    match = _VERSION_RE.match(text)
    if match is None:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part) for part in match["release"].split("."))


def prefix_matches(actual: tuple[int, ...], expected: str, width: int) -> bool:
    """Compare the first ``width`` components (fewer if ``expected`` has fewer) of two versions."""
    want = release_components(expected)[:width]
    return actual[: len(want)] == want


def dotted(components: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in components)
