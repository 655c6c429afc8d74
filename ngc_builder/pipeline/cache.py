"""Before the first build: the package cache holds every file the selected images' locks name
and is served on the network the builds run on."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TypeVar

from ngc_builder.cache.address import cache_port
from ngc_builder.cache.fill import fill_debs, fill_wheels, index_cache, missing_files
from ngc_builder.cache.network import BuildNetwork, build_network
from ngc_builder.cache.server import ensure_serving, served_elsewhere
from ngc_builder.cache.store import PackageCache, default_root, open_cache
from ngc_builder.errors import StepError
from ngc_builder.lock.models import ReleaseLock
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.pipeline.console import Ui
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.services.engine import Engine
from ngc_builder.services.environment import setting

T = TypeVar("T")


def ready_cache(engine: Engine, loaded: LoadedRelease, lock: ReleaseLock,
                selected: list[ImageSpec], offline: bool, ui: Ui,
                meanwhile: Callable[[], T]) -> tuple[BuildNetwork, T]:
    """Fill (or, offline, only check) the cache, then serve it to the builds. `meanwhile`
    (the OS images, made from the .debs) runs beside the wheels' download, GBs from PyPI;
    its result is returned with the network."""
    cache = open_cache(default_root())
    if offline:
        _require_complete(cache, loaded, selected, lock)
        made = meanwhile()
    else:
        sink = ui.sink("cache")
        filled = fill_debs(cache, loaded, selected, lock, sink)
        with ThreadPoolExecutor(1, thread_name_prefix="os-images") as pool:
            beside = pool.submit(meanwhile)
            filled += fill_wheels(cache, loaded, selected, lock, sink)
            made = beside.result()
        ui.step("cache", f"{filled.downloaded} files downloaded ({filled.bytes / 1e9:.2f} GB), "
                "the rest already cached")
    index_cache(cache, selected, lock)
    return serve_cache(engine, offline, ui), made


def serve_cache(engine: Engine, offline: bool, ui: Ui) -> BuildNetwork:
    """The filled cache served on `engine`'s build network (each build host gets its own)."""
    cache = open_cache(default_root())
    network = build_network(engine, offline)
    elsewhere = setting("NGC_CACHE_ADDRESS")
    if elsewhere and offline:  # an internal network reaches only its own gateway
        raise StepError("cache", "offline", "NGC_CACHE_ADDRESS: a hermetic build reaches only "
                        "a cache this run serves on its own network")
    if elsewhere:
        network = replace(network, cache_address=elsewhere)
        url = served_elsewhere(cache, elsewhere, cache_port())
    else:
        url = ensure_serving(cache, network.cache_address, cache_port())
    ui.step("cache", f"serving {cache.root} at {url} (builds: ngc-cache, "
            f"network {network.mode or 'default'})")
    return network


def _require_complete(cache: PackageCache, loaded: LoadedRelease, selected: list[ImageSpec],
                      lock: ReleaseLock) -> None:
    missing = missing_files(cache, loaded, selected, lock)
    if missing:
        raise StepError("cache", "offline", f"{len(missing)} locked files are not in the cache "
                        f"{cache.root} (first: {missing[0]}): run `ngc-builder fetch MANIFEST` "
                        "where there is network, or set NGC_CACHE_DIR to a filled cache")
