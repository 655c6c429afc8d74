"""What each layer became when it was compressed: diff ID -> blob digest and sizes.

Kept on the build host beside the package cache, so that a later push (a child image whose
parent's layers are already in the registry, a rerun) knows a layer's blob without exporting
and compressing it again, and can recognise it in an export by its size before reading it.
Compression is deterministic (publish/gzip.py), so an entry stays true however old it is.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from ngc_builder.cache.store import default_root
from ngc_builder.files import MEMO_LIMIT, read_text


@dataclass(frozen=True)
class LayerBlob:
    digest: str  # of the gzip stream: the blob's name in the registry
    size: int  # compressed bytes
    tar_size: int  # the uncompressed layer tar's bytes, as an export announces them


def default_memo_path() -> Path:
    return default_root().parent / "layers.json"


class LayerMemo:
    """The memo file, read once, updated as layers are uploaded (threads share one)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.layers: dict[str, LayerBlob] = {}
        self.configs: dict[str, int] = {}  # image ID -> its config blob's size
        self._read()

    def _read(self) -> None:
        self.layers, self.configs = _load(self.path)

    def remember(self, diff_id: str, blob: LayerBlob) -> None:
        with self._lock:
            self.layers[diff_id] = blob

    def remember_config(self, image_id: str, size: int) -> None:
        with self._lock:
            self.configs[image_id] = size

    def save(self) -> None:
        """Written whole to a temporary file, then renamed: readers never see half of it."""
        with self._lock:
            layers, configs = _load(self.path)  # another run may have added its own meanwhile
            layers.update(self.layers)
            configs.update(self.configs)
            data = {"layers": {k: asdict(v) for k, v in sorted(layers.items())},
                    "configs": dict(sorted(configs.items()))}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}."
                                        f"{threading.get_ident()}")
        temporary.write_text(json.dumps(data, indent=1) + "\n")
        temporary.replace(self.path)


def _load(path: Path) -> tuple[dict[str, LayerBlob], dict[str, int]]:
    try:
        data = json.loads(read_text(path, MEMO_LIMIT))
        layers = {k: LayerBlob(**v) for k, v in data.get("layers", {}).items()}
        return layers, {k: int(v) for k, v in data.get("configs", {}).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}, {}  # a lost or damaged memo only costs time
