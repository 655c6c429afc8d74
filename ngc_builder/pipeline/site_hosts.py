"""The site's build hosts made ready for a run: each engine opened (and its GPU mode asked of
it), then on every host but the first (which the run sets up as it always did) the stale
runners of killed runs swept, the package cache served on its build network and its OS images
obtained."""

from __future__ import annotations

from collections.abc import Callable

from ngc_builder.build.osbase import Bootstrap, Strategy
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.site import EngineHost
from ngc_builder.pipeline.cache import serve_cache
from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.hosts import BuildHost
from ngc_builder.pipeline.release import obtain_os_images
from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.services.engine import Engine, remove_stale_containers
from ngc_builder.services.hosts import host_gpu_mode, open_engine

OpenHost = Callable[[EngineHost], tuple[Engine, str]]  # site entry -> its engine, GPU mode


def open_site_engine(entry: EngineHost) -> tuple[Engine, str]:
    """The host's engine once it answered, and its GPU mode (its `gpu:`, else its info)."""
    engine = open_engine(entry.name, entry.url, entry.tls)
    return engine, host_gpu_mode(engine, entry.gpu, entry.name)


def open_site_hosts(entries: list[EngineHost], open_host: OpenHost) -> list[BuildHost]:
    hosts = []
    for entry in entries:
        engine, mode = open_host(entry)
        hosts.append(BuildHost(entry.name, engine, jobs=entry.jobs, gpu_mode=mode))
    return hosts


def sweep_stale(hosts: list[BuildHost], ui: Ui) -> None:
    for host in hosts:
        swept = remove_stale_containers(host.engine)
        where = f" on {host.name}" if len(hosts) > 1 else ""  # one host: no name to tell
        if swept:
            ui.step("release", f"removed {swept} container(s){where} left by an earlier run "
                               "that was killed")


def ready_other_hosts(hosts: list[BuildHost], loaded: LoadedRelease, plan: ReleasePlan,
                      selected: list[ImageSpec], strategy: Strategy, offline: bool, ui: Ui,
                      locked: dict[str, Bootstrap]) -> None:
    """Every host after the first: the cache served to its builds, its own OS images (a base
    layer placed there is built FROM them)."""
    for host in hosts[1:]:
        ui.step("release", f"preparing build host {host.name} (GPU: {host.gpu_mode})")
        host.network = serve_cache(host.engine, offline, ui)
        obtained = obtain_os_images(host.engine, loaded, plan, selected, strategy, ui, locked)
        host.os_image_ids = {name: os.image_id for name, os in obtained.items() if os.image_id}
