"""Another platform's renders (`linux/arm64`): the same templates as the host's, each image
FROM its parent's render for that platform and the OS image made from that platform's lock,
installing that platform's locked packages; its wheels are ADDed from a tar the build host
writes (render/installs.py), so the layer's only emulated work is its .debs' maintainer
scripts and compiling bytecode."""

from __future__ import annotations

from ngc_builder.errors import InputError
from ngc_builder.lock.models import ImageLock, ReleaseLock
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.plan.dag import ReleasePlan, os_ref
from ngc_builder.render.contexts import RenderedImage, render_image
from ngc_builder.render.repro import source_epoch
from ngc_builder.render.templates import TEMPLATE_ERRORS, environment, template_problem


def platform_os_refs(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                     platform: str) -> dict[str, str]:
    """Each OS base's image for `platform`, named after its lock for that platform."""
    closure = lock.of_platform(platform)
    return {name: f"{os_ref(loaded.bases[name])}-{closure.os[name].digest()[:12]}"
            for name in plan.os_refs if name in closure.os}


def render_platform(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                    platform: str, emulated: bool = False,
                    split: bool = True) -> list[RenderedImage]:
    """The images of `plan` that ship `platform`, parents first (`emulated`: installed as
    on the host platform, all of it emulated; bench/arm64_vs_amd64.py compares)."""
    env = environment(loaded.root)
    closure = lock.of_platform(platform)
    locked = closure.images
    os_refs = platform_os_refs(loaded, plan, lock, platform)
    done: dict[str, RenderedImage] = {}
    for spec in plan.images:
        if platform not in spec.platforms:
            continue
        parent_ref = os_refs.get(spec.base, "") if spec.parent is None else \
            done[spec.parent].local_ref
        try:
            done[spec.name] = render_image(env, loaded, spec, parent_ref,
                                           locked.get(spec.name) or ImageLock(inputs={}),
                                           source_epoch(closure.os, spec.base),
                                           platform, emulated, split)
        except TEMPLATE_ERRORS as exc:
            raise InputError([template_problem(exc, loaded.root, spec.name)]) from None
    return list(done.values())
