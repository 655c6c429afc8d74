"""The one clock of the builder: UTC, to the second, as records and tag moves write it."""

from __future__ import annotations

import datetime as dt


def now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
