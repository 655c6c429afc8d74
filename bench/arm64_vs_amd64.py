"""Each image's linux/arm64 build against its linux/amd64 build, side by side, on this amd64
host: the OS base from its lock (mmdebstrap; arm64's maintainer scripts emulated), then every
layer with nothing cached (`--no-cache`), amd64 first (its build is the arm64 build's host
stage: the base's venv, the wheels' bytecode), then arm64 as a release builds it (wheels
installed and compiled on the host platform, only .deb maintainer scripts and the lock check
emulated) and, with --emulated, arm64 fully emulated as docker-stacks built it before it moved
to native runners (pip, venv and compileall all under QEMU). Prints seconds and ratios.

The OS images are bootstrapped under throwaway tags (removed after), so their times are
measured on every run; the layers are built FROM the real OS refs.

Usage: .venv/bin/python bench/arm64_vs_amd64.py
    [--release tests/integration/data/releases/ci-arm64.yaml] [--emulated]
(`--release releases/26.12.yaml`: the images of the release that ship arm64, the others left)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import docker.errors

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ngc_builder.assemble.image import build_image  # noqa: E402
from ngc_builder.assemble.osbase import locked_bootstrap  # noqa: E402
from ngc_builder.assemble.platform import HostStage, platform_context  # noqa: E402
from ngc_builder.assemble.wheel_install import VenvTree  # noqa: E402
from ngc_builder.cache.network import BuildNetwork  # noqa: E402
from ngc_builder.cache.store import PackageCache, default_root, open_cache  # noqa: E402
from ngc_builder.lock.models import OsLock  # noqa: E402
from ngc_builder.pipeline.cache import ready_cache  # noqa: E402
from ngc_builder.pipeline.console import Ui  # noqa: E402
from ngc_builder.pipeline.prepare import Prepared, prepare  # noqa: E402
from ngc_builder.render.contexts import RenderedImage  # noqa: E402
from ngc_builder.render.platforms import platform_os_refs, render_platform  # noqa: E402
from ngc_builder.services.engine import connect  # noqa: E402

ARM = "linux/arm64"


def timed(action: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    result = action()
    return result, time.monotonic() - started


def os_seconds(client: Any, prepared: Prepared, cache: PackageCache) -> tuple[float, float]:
    """Each platform's OS base bootstrapped from its lock, under a throwaway tag."""
    entries: list[OsLock] = [*prepared.lock.os.values()][:1]
    entries += [*prepared.lock.of_platform(ARM).os.values()][:1]
    seconds = []
    for index, entry in enumerate(entries):
        ref = f"ngc-bench/os-{entry.architecture}:{index}"
        started = time.monotonic()
        locked_bootstrap(entry, cache.deb_path)(client, prepared.loaded.base, ref,
                                                lambda _: None)
        seconds.append(time.monotonic() - started)
        client.images.remove(ref, force=True)
    return seconds[0], seconds[1]


def ensure_os(client: Any, prepared: Prepared, cache: PackageCache) -> None:
    """The real OS refs the layers are built FROM, made when missing."""
    arm = prepared.lock.of_platform(ARM)
    wanted = [(prepared.plan.os_refs[name], entry) for name, entry in prepared.lock.os.items()]
    wanted += [(ref, arm.os[name]) for name, ref in
               platform_os_refs(prepared.loaded, prepared.plan, prepared.lock, ARM).items()]
    for ref, entry in wanted:
        try:
            client.images.get(ref)
        except docker.errors.ImageNotFound:
            locked_bootstrap(entry, cache.deb_path)(client, prepared.loaded.base, ref,
                                                    lambda _: None)


def build(client: Any, image: RenderedImage, folder: Path, network: BuildNetwork) -> float:
    _, took = timed(lambda: build_image(client, image, folder, {}, lambda _: None,
                                        nocache=True, network=network))
    return float(took)


def layers(client: Any, prepared: Prepared, cache: PackageCache, network: BuildNetwork,
           scratch: Path, emulated: bool) -> list[tuple[str, float, float, float | None]]:
    arm = prepared.lock.of_platform(ARM)
    ours = render_platform(prepared.loaded, prepared.plan, prepared.lock, ARM)
    slow = render_platform(prepared.loaded, prepared.plan, prepared.lock, ARM, emulated=True)
    hosts = {image.spec.name: image for image in prepared.rendered}  # a release's other rows
    rows = []                                                       # ship amd64 alone
    for image, baseline in zip(ours, slow, strict=True):
        host = hosts[image.spec.name]
        amd64 = build(client, host, host.write(scratch / "amd64", owned=True), network)
        stage = HostStage(client, client.images.get(host.local_ref).id, cache.wheel_path,
                          VenvTree(prepared.loaded.base.python, arm.os[image.spec.base].epoch))
        started = time.monotonic()
        folder = platform_context(image, scratch / "arm64", arm.images[image.spec.name], stage,
                                  lambda _: None)
        staged = time.monotonic() - started
        arm64 = staged + build(client, image, folder, network)
        full = build(client, baseline, baseline.write(scratch / "emulated", owned=True),
                     network) if emulated else None
        rows.append((image.spec.name, amd64, arm64, full))
        print(f"  {image.spec.name}: amd64 {amd64:.1f} s, arm64 {arm64:.1f} s "
              f"(host stage {staged:.1f} s)" + (f", fully emulated {full:.1f} s" if full else ""),
              flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path,
                        default=REPO / "tests/integration/data/releases/ci-arm64.yaml")
    parser.add_argument("--emulated", action="store_true",
                        help="also build arm64 fully emulated (slow)")
    args = parser.parse_args()
    connect()  # a clear error when no engine answers
    client = docker.from_env(timeout=3600)
    prepared = prepare(args.release, REPO, stack_check=False)
    cache = open_cache(default_root())
    with tempfile.TemporaryDirectory(prefix="ngc-bench-arm64-") as scratch:
        ui = Ui(Path(scratch) / "logs", show_logs=False)
        try:
            network = ready_cache(client, prepared.loaded, prepared.lock, prepared.plan.images,
                                  False, ui)
        finally:
            ui.close()
        amd64_os, arm64_os = os_seconds(client, prepared, cache)
        print(f"  os: amd64 {amd64_os:.1f} s, arm64 {arm64_os:.1f} s", flush=True)
        ensure_os(client, prepared, cache)
        rows = layers(client, prepared, cache, network, Path(scratch), args.emulated)
    print(f"\n{'image':<12} {'amd64 s':>8} {'arm64 s':>8} {'ratio':>6} {'emulated s':>11} "
          f"{'ratio':>6}")
    print(f"{'os':<12} {amd64_os:>8.1f} {arm64_os:>8.1f} {arm64_os / amd64_os:>6.1f}")
    for name, amd64, arm64, full in rows:
        tail = f" {full:>11.1f} {full / amd64:>6.1f}" if full is not None else ""
        print(f"{name:<12} {amd64:>8.1f} {arm64:>8.1f} {arm64 / amd64:>6.1f}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
