"""`ngc-builder check MANIFEST`: the manifest, its OS bases, frameworks and templates, its
lock (fresh for every image), and (unless --offline) each framework wheel's requirements
against its CUDA stack."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.commands.prepare import fresh_lock
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.contexts import render_release


@dataclass(frozen=True)
class CheckOptions:
    manifest: Path
    root: Path | None = None
    offline: bool = False
    as_json: bool = False


def check_command(options: CheckOptions) -> int:
    loaded = load_release(options.manifest, options.root)
    if not options.offline:
        check_stacks(loaded)
    plan = plan_release(loaded)
    lock = fresh_lock(loaded, plan)  # a stale lock names each image and what changed
    render_release(loaded, plan, lock)  # template mistakes are input mistakes too
    images = [image.name for image in plan.images]
    if options.as_json:
        print(json.dumps({"release": loaded.release.release, "ok": True, "images": images}))
    else:
        stacks = "stack check skipped (--offline)" if options.offline else "stacks match"
        print(f"{options.manifest}: ok: release {loaded.release.release}, {stacks}, "
              f"lock fresh, images: {', '.join(images)}")
    return EXIT_OK
