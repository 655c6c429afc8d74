"""`ngc-builder check MANIFEST`: the manifest, its OS bases, frameworks and templates, its
lock (fresh for every image), and (unless --offline) each framework wheel's requirements
against its CUDA stack."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.cache.store import PackageCache, default_root
from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.pipeline.prepare import fresh_lock, require_closure
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
    # Read only: the cache's wheels and .debs give their metadata; what it lacks stays unchecked.
    closure = require_closure(loaded, plan, lock, plan.images, PackageCache(default_root()))
    render_release(loaded, plan, lock)  # template mistakes are input mistakes too
    images = [image.name for image in plan.images]
    if options.as_json:
        print(json.dumps({"release": loaded.release.release_id, "ok": True, "images": images,
                          "closure_unchecked": closure.unchecked}))
    else:
        stacks = "stack check skipped (--offline)" if options.offline else "stacks match"
        unchecked = (f" (not {', '.join(closure.unchecked)}: packages not in the package "
                     "cache, `ngc-builder fetch`)" if closure.unchecked else "")
        print(f"{options.manifest}: ok: release {loaded.release.release_id}, {stacks}, "
              f"lock fresh, lock content checked{unchecked}, images: {', '.join(images)}")
    return EXIT_OK
