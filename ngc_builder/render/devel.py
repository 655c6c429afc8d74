"""A devel image's Dockerfile and context: the framework image plus the host compiler and
ninja (the lock's .debs), the stack's devel wheels if it has any (nvcc, crt, nvvm and cccl
are usually in the stack already), `lib/libcudart.so` for `-lcudart`, and CUDA_HOME.

No second CUDA: CUDA_HOME is the stack's own wheel prefix, the copy every framework loads.
"""

from __future__ import annotations

import re

import jinja2

from ngc_builder.lock.models import ImageLock
from ngc_builder.manifest.devel import cuda_home
from ngc_builder.manifest.devel_env import devel_environment
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.render.environment import env_instruction
from ngc_builder.render.installs import (
    apt_install,
    expect_json,
    requirements_lock,
    wheel_install,
)

LOCK_FILE = "/opt/ngc/devel/requirements.lock"
# CUDA_HOME goes into PATH unquoted (ENV must expand $PATH): only these characters, which a
# validated Python version and CUDA major cannot leave.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9/._-]+\Z")


def devel_parts(env: jinja2.Environment, spec: ImageSpec, context: dict[str, object],
                loaded: LoadedRelease, locked: ImageLock) -> tuple[str, dict[str, bytes]]:
    """The Dockerfile text and the files of its build context."""
    assert spec.stack is not None and spec.entry is not None
    stack = loaded.release.cuda_stacks[spec.stack]
    base = loaded.bases[spec.base]
    home = cuda_home(stack, base.python)
    if not _PLAIN_PATH.match(home):
        raise ValueError(f"CUDA_HOME {home!r} holds characters a PATH entry cannot")
    expect = {"image": spec.name, "devel": {
        "cuda_home": home, "nvcc": {**stack.wheels, **stack.devel_wheels}["nvidia-cuda-nvcc"],
        "devel_wheels": dict(sorted(stack.devel_wheels.items()))}}
    files = {"expect/30-devel.json": expect_json(expect),
             "devel/requirements.lock": requirements_lock(locked.pip).encode()}
    text = env.get_template("devel.Dockerfile.j2").render(
        **context, image=spec, cuda_home=home, cuda_major=stack.cuda_major,
        **wheel_install(LOCK_FILE, locked.pip, context),
        apt_install=apt_install(locked.apt, list(base.devel_apt_packages)),
        environment=env_instruction({"CUDA_HOME": home, "CUDA_PATH": home, **devel_environment(
            loaded.frameworks[spec.entry.framework].spec.devel_env,
            loaded.release.targets_of(spec.entry))}))
    return text, files

