"""`ngc-builder fetch MANIFEST`: fill the package cache with every file the release's lock
names, ahead of a build (for a build farm with no network, copy the cache folder over)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.cache.fill import fill_cache
from ngc_builder.cache.store import default_root, open_cache
from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.pipeline.prepare import prepare


@dataclass(frozen=True)
class FetchOptions:
    manifest: Path
    root: Path | None = None
    cache_dir: Path | None = None
    as_json: bool = False


def fetch_command(options: FetchOptions) -> int:
    prepared = prepare(options.manifest, options.root, stack_check=False)
    cache = open_cache(options.cache_dir or default_root())
    filled = fill_cache(cache, prepared.loaded, prepared.plan.images, prepared.lock,
                        lambda text: print(f"fetch: {text}", file=sys.stderr))
    if options.as_json:
        print(json.dumps({"cache": str(cache.root), "downloaded": filled.downloaded,
                          "bytes": filled.bytes}))
    else:
        print(f"{cache.root}: {filled.downloaded} files downloaded "
              f"({filled.bytes / 1e9:.2f} GB); every file of the lock is cached")
    return EXIT_OK
