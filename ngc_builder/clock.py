"""The one clock of the builder: UTC, to the second, as records and tag moves write it."""

from __future__ import annotations

import datetime as dt
import time

# When this process started its work (the CLI imports this module first): the zero of a
# release's timeline, so checking, rendering and locking before the first image are on it.
STARTED = time.time()


def now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
