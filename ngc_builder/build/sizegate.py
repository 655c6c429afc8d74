"""The size gate: an image larger than 1.2 x its manifest baseline fails, naming the ten
largest paths it added on top of its parent."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ngc_builder.errors import StepError

GROWTH_LIMIT = 1.2
TOP_PATHS = 10
PATH_DEPTH = 6  # /opt/venv/lib/python3.13/site-packages/<package>: 6 components
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20,
          "GIB": 2**30}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*")
LIST_FILES = ["sh", "-c", "find / -xdev -type f -printf '%s\\t%p\\n' 2>/dev/null; true"]


def parse_size(text: str) -> int:
    """'6.3 GB' -> 6300000000; units B, KB, MB, GB (decimal) and KiB, MiB, GiB."""
    match = _SIZE.fullmatch(text)
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError(f"{text!r} is not a size like '6.3 GB' or '900 MiB'")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def over_limit(size: int, baseline: int) -> bool:
    return size > GROWTH_LIMIT * baseline


def largest_added(
    image_files: dict[str, int], parent_files: dict[str, int]
) -> list[tuple[str, int]]:
    """Bytes added per path (grouped PATH_DEPTH components deep), largest first."""
    grown: Counter[str] = Counter()
    for path, size in image_files.items():
        added = size - parent_files.get(path, 0)
        if added > 0:
            grown["/".join(path.split("/")[: PATH_DEPTH + 1])] += added
    return grown.most_common(TOP_PATHS)


def check(client: Any, name: str, image_id: str, size: int, baseline_text: str,
          parent_id: str | None) -> str:
    baseline = parse_size(baseline_text)
    shown = f"{size / 1e9:.2f} GB vs baseline {baseline_text} (limit {GROWTH_LIMIT} x)"
    if not over_limit(size, baseline):
        return f"size gate passed: {shown}"
    added = largest_added(_files(client, image_id), _files(client, parent_id) if parent_id else {})
    paths = ", ".join(f"{path} (+{grew / 1e6:.0f} MB)" for path, grew in added)
    raise StepError(name, "size", f"{shown} exceeded; largest paths added: {paths}")


def _files(client: Any, image_id: str) -> dict[str, int]:
    output = client.containers.run(image_id, LIST_FILES, entrypoint=[], remove=True,
                                   network_disabled=True, stderr=False)
    files = {}
    for line in output.decode("utf-8", "replace").splitlines():
        size, _, path = line.partition("\t")
        if size.isdigit():
            files[path] = int(size)
    return files
