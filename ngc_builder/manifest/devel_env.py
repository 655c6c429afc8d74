"""What a framework's devel image sets for building extensions against it, from the release
(`devel_env:` in `frameworks/<name>/framework.yaml`).

A build tool that finds no such setting asks the machine: torch's `cpp_extension` reads the
GPU's compute capability when TORCH_CUDA_ARCH_LIST is unset, and fails where there is no GPU
(a login node, a CI runner). The release knows its GPUs (`gpu_targets`), so the image says them.
A value may name these, filled in per image:

- `{gpu_targets}`: the row's targets, oldest first, `;`-separated: `8.0;9.0;10.0`;
- `{gpu_targets_ptx}`: the same with PTX of the newest for later GPUs: `8.0;9.0;10.0+PTX`.

Anything else is plain text; the rendered value must stay a plain word (letters, digits and
`.;+_/:,=-`), as it goes into the image's ENV.
"""

from __future__ import annotations

import re
import string
from typing import Annotated

from pydantic import AfterValidator

PLACEHOLDERS = ("gpu_targets", "gpu_targets_ptx")
_NAME = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
_PLAIN = re.compile(r"[A-Za-z0-9.;+_/:,=-]*\Z")


def _env_name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(f"{value!r} is not an environment variable name ([A-Z_][A-Z0-9_]*)")
    return value


def _template(value: str) -> str:
    try:
        named = {field for _, field, _, _ in string.Formatter().parse(value) if field is not None}
    except ValueError as exc:
        raise ValueError(f"{value!r}: {exc}") from None
    unknown = sorted(named - set(PLACEHOLDERS))
    if unknown:
        raise ValueError(f"{value!r} names {', '.join(unknown)}; a value may name "
                         f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}")
    filled = fill(value, ["8.0"])
    if not _PLAIN.match(filled):
        raise ValueError(f"{value!r} is not a plain word (letters, digits and .;+_/:,=-)")
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]
EnvTemplate = Annotated[str, AfterValidator(_template)]


def ordered_targets(targets: list[str]) -> list[str]:
    return sorted(set(targets), key=lambda target: tuple(map(int, target.split("."))))


def fill(template: str, targets: list[str]) -> str:
    ordered = ordered_targets(targets)
    with_ptx = [*ordered[:-1], f"{ordered[-1]}+PTX"] if ordered else []
    return template.format(gpu_targets=";".join(ordered), gpu_targets_ptx=";".join(with_ptx))


def devel_environment(templates: dict[str, str], targets: list[str]) -> dict[str, str]:
    """The devel image's own variables for a row with these GPU targets."""
    return {name: fill(template, targets) for name, template in sorted(templates.items())}
