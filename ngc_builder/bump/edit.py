"""Write the next month's manifest as an edit of this month's: comments, order and quoting kept.

A release file is reviewed by people every month; re-dumping it would drop every comment
that says why a row is what it is. ruamel.yaml's round-trip mode keeps them; only the values
the bump moved are replaced (as double-quoted strings, as the manifests write versions).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ngc_builder.files import INPUT_LIMIT, read_text, write_atomic


def round_trip() -> YAML:
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # long expect_failure reasons stay on one line, as written
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


# row -> field (extra_packages, tools) -> package -> new version
PackageEdits = Mapping[int, Mapping[str, Mapping[str, str]]]


def edited(text: str, release: str, versions: Mapping[int, str],
           stacks: Mapping[str, Mapping[str, str]], cuda: Mapping[str, str],
           packages: PackageEdits | None = None) -> str:
    """`text` with the release id, image versions (by row), stack wheels, CUDA and the rows'
    extra packages and tools replaced."""
    yaml = round_trip()
    data: Any = yaml.load(text)
    data["release"] = DoubleQuotedScalarString(release)
    for row, version in versions.items():
        data["images"][row]["version"] = DoubleQuotedScalarString(version)
    for name, wheels in stacks.items():
        for wheel, version in wheels.items():
            data["cuda_stacks"][name]["wheels"][wheel] = DoubleQuotedScalarString(version)
    for name, version in cuda.items():
        data["cuda_stacks"][name]["cuda"] = DoubleQuotedScalarString(version)
    for row, fields in (packages or {}).items():
        for kind, moved in fields.items():
            for package, version in moved.items():
                data["images"][row][kind][package] = DoubleQuotedScalarString(version)
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def write_edited(source: Path, target: Path, release: str, versions: Mapping[int, str],
                 stacks: Mapping[str, Mapping[str, str]], cuda: Mapping[str, str],
                 packages: PackageEdits | None = None) -> None:
    text = edited(read_text(source, INPUT_LIMIT), release, versions, stacks, cuda, packages)
    write_atomic(target, text)
