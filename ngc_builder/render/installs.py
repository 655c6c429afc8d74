"""The install steps a locked image runs: pip from the cache's index with every hash checked,
apt from the cache's flat repository of exactly the locked .debs. The cache is named
`ngc-cache` (a name that exists only inside builds), so no address of the build host, no
CA bundle and no proxy setting is written into an image; pip and apt in the published image
keep their defaults (PyPI, the Debian mirror)."""

from __future__ import annotations

import json

from ngc_builder.cache.address import BUILD_HOST_NAME, build_url
from ngc_builder.cache.apt_repo import install_command, repo_path
from ngc_builder.lock.models import AptPackage, PipPackage
from ngc_builder.manifest.platforms import HOST_PLATFORM


def requirements_lock(packages: list[PipPackage]) -> str:
    return "".join(f"{package.requirement()}\n" for package in packages)


def pip_install(lock_file: str, packages: list[PipPackage]) -> str:
    """Shell text after `RUN `: the locked wheels, then proof that they are what is installed."""
    check = f"python -m ngc_runner.lockcheck {lock_file}"
    if not packages:
        return check
    return (f"pip install --no-cache-dir --require-hashes --index-url {build_url()}simple/ "
            f"--trusted-host {BUILD_HOST_NAME} -r {lock_file} \\\n && {check}")


# Another platform's wheels, installed on the build host (build/wheel_install.py) and their
# bytecode compiled natively (build/host_compile.py), in this tar beside the Dockerfile, which
# ADDs it: neither pip nor the compiler runs emulated. The base layer's tar is the venv itself.
VENV_TAR = "venv.tar"


def unpacked_install(lock_file: str) -> str:
    """Shell text after `RUN ` once the venv tar is in: proof that the installed
    distributions are the locked ones (the layer's only emulated Python)."""
    return f"python -m ngc_runner.lockcheck {lock_file}"


def apt_install(packages: list[AptPackage], requested: list[str]) -> str | None:
    """Shell text after `RUN ` for the locked .debs, None when the layer installs none."""
    if not packages:
        return None
    return install_command(repo_path(packages), packages, requested)


def wheel_install(lock_file: str, packages: list[PipPackage],
                  context: dict[str, object]) -> dict[str, str | None]:
    """The template's `pip_install` and `unpacked` (the venv tar it ADDs first, if any)."""
    if context["platform"] == HOST_PLATFORM or context.get("emulated"):
        return {"pip_install": pip_install(lock_file, packages), "unpacked": None}
    return {"pip_install": unpacked_install(lock_file),
            "unpacked": VENV_TAR if packages else None}


def expect_json(data: object) -> bytes:
    """An expectation file (expect/NN-*.json): sorted keys, so the same data renders the same
    bytes, and so the same image key."""
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
