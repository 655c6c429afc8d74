"""One image pushed two ways, side by side in one run: the engine's `docker push` against
ngc-builder's push through the registry API (layers gzipped on every core, publish/upload.py).

Each side pushes the same local image into a fresh registry of its own (`docker-registry
serve` on a temporary directory), so every layer is compressed and uploaded on both sides.
Prints the wall times, the bytes each registry stored, and their ratios; writes JSON.

Usage (after `make bench` or a release left a CUDA-stack image):
    .venv/bin/python bench/push_api_vs_engine.py [IMAGE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.release_vs_naive import disk_bytes, registry  # noqa: E402
from ngc_builder.publish.layer_memo import LayerMemo  # noqa: E402
from ngc_builder.publish.upload import upload_image  # noqa: E402
from ngc_builder.services.engine import connect  # noqa: E402
from ngc_builder.services.registry import parse_registry  # noqa: E402


def newest_stack_image() -> str:
    listed = subprocess.run(["docker", "images", "--format", "{{.Repository}}:{{.Tag}}",
                             "ngc-local/cuda-cu13"], capture_output=True, text=True,
                            check=True).stdout.split()
    if not listed:
        sys.exit("bench: no ngc-local/cuda-cu13 image here: run `make bench` (or a release) "
                 "first, or name an image")
    return listed[0]


def engine_side(image: str, address: str) -> float:
    ref = f"{address}/stack:bench"
    subprocess.run(["docker", "tag", image, ref], check=True)
    started = time.monotonic()
    subprocess.run(["docker", "push", "-q", ref], check=True, capture_output=True)
    elapsed = time.monotonic() - started
    subprocess.run(["docker", "rmi", ref], check=False, capture_output=True)
    return elapsed


def api_side(image: str, address: str, memo: Path) -> float:
    engine = connect()
    image_id = engine.api.inspect_image(image)["Id"]
    started = time.monotonic()
    upload_image(engine.api, parse_registry(address), "stack", image_id, "bench", [],
                 LayerMemo(memo), lambda line: None)
    return time.monotonic() - started


def run(image: str, work: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {"image": image}
    with registry(5071, work / "registry-engine") as address:
        figures["engine_s"] = engine_side(image, address)
    figures["engine_bytes"] = disk_bytes(work / "registry-engine")
    with registry(5072, work / "registry-api") as address:
        figures["api_s"] = api_side(image, address, work / "layers.json")
    figures["api_bytes"] = disk_bytes(work / "registry-api")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image", nargs="?")
    parser.add_argument("--json", type=Path, default=REPO / "build" / "bench-push.json")
    args = parser.parse_args()
    (REPO / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ngc-bench-push-", dir=REPO / "build") as scratch:
        figures = run(args.image or newest_stack_image(), Path(scratch))
    args.json.write_text(json.dumps(figures, indent=2) + "\n")
    gb = 1e9
    print(f"push {figures['image']}\n"
          f"  docker push   {figures['engine_s']:7.1f} s  {figures['engine_bytes'] / gb:.2f} GB\n"
          f"  registry API  {figures['api_s']:7.1f} s  {figures['api_bytes'] / gb:.2f} GB\n"
          f"  ratio         {figures['api_s'] / figures['engine_s']:.2f} time, "
          f"{figures['api_bytes'] / figures['engine_bytes']:.2f} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
