from __future__ import annotations

from typing import Any

IMPORT_NAME = "pytensor"


def register(suite: Any) -> None:
    pass
