"""T0: the versions a job script reads from the environment are the image's, and the image
says what it holds in /workspace/README.md.

The ENV comes from the same data as the labels (render/environment.py); the expectation files
hold that data too, so this check holds the one against the other. Under a runtime that does
not apply the image's environment (Charliecloud without ``--set-env``), it fails, as a job
script reading ``PYTORCH_VERSION`` there would.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .suite import Check, Context, Suite

README = Path("/workspace/README.md")


def register(suite: Suite, expect: dict[str, Any]) -> None:
    if expected_environment(expect):
        suite.add(Check("image.environment", "T0", False, check_environment))
    if expect.get("framework") and expect.get("release"):  # a release's framework image
        suite.add(Check("image.readme", "T0", False, check_readme))


def expected_environment(expect: dict[str, Any]) -> dict[str, str]:
    values: dict[str, str] = {}
    if expect.get("stack") and expect.get("cuda"):
        values["CUDA_VERSION"] = str(expect["cuda"])
        for library, version in sorted(expect.get("libraries", {}).items()):
            values[f"{library.upper()}_VERSION"] = str(version)
    if expect.get("framework") and expect.get("release"):
        name = re.sub(r"[^A-Z0-9]", "_", str(expect["framework"]).upper())
        values[f"{name}_VERSION"] = str(expect["version"])
        values[f"NVIDIA_{name}_VERSION"] = str(expect["release"])
        values["NGC_RELEASE"] = str(expect["release"])
    return values


def check_environment(ctx: Context) -> str:
    if ctx.host_mode:
        ctx.skip("host mode: the environment is the host's, not an image's")
    wanted = expected_environment(ctx.expect)
    wrong = {key: os.environ.get(key) for key, value in wanted.items()
             if os.environ.get(key) != value}
    ctx.evidence("expected", wanted)
    if wrong:
        ctx.fail(f"environment differs from the image's labels: {wrong} (expected "
                 f"{ {key: wanted[key] for key in wrong} })")
    return ", ".join(f"{key}={value}" for key, value in sorted(wanted.items()))


def check_readme(ctx: Context) -> str:
    if ctx.host_mode:
        ctx.skip("host mode: no image README")
    try:
        text = README.read_text(encoding="utf-8")
    except OSError as exc:
        ctx.fail(f"{README}: {exc.strerror}")
    version = str(ctx.expect.get("version", ""))
    first_line = text.splitlines()[0] if text else ""
    if not version or version not in first_line:
        ctx.fail(f"{README} does not name {ctx.expect.get('framework')} {version} first")
    return f"{README} names {version} ({len(text.splitlines())} lines)"
