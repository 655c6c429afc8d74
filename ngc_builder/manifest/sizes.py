"""Sizes as release engineers write them in a manifest ('6.3 GB', '900 MiB')."""

from __future__ import annotations

import re

_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20,
          "GIB": 2**30}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*")


def parse_size(text: str) -> int:
    """'6.3 GB' -> 6300000000; units B, KB, MB, GB (decimal) and KiB, MiB, GiB."""
    match = _SIZE.fullmatch(text)
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError(f"{text!r} is not a size like '6.3 GB' or '900 MiB'")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])
