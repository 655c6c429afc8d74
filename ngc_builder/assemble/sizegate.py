"""The size gate: an image larger than 1.2 x its manifest baseline fails, naming the ten
largest paths it added on top of its parent."""

from __future__ import annotations

from collections import Counter

from ngc_builder.errors import StepError
from ngc_builder.manifest.sizes import parse_size
from ngc_builder.services.engine import Engine

GROWTH_LIMIT = 1.2
TOP_PATHS = 10
PATH_DEPTH = 6  # /opt/venv/lib/python3.13/site-packages/<package>: 6 components
LIST_FILES = ["sh", "-c", "find / -xdev -type f -printf '%s\\t%p\\n' 2>/dev/null; true"]


def over_limit(size: int, baseline: int) -> bool:
    return size > GROWTH_LIMIT * baseline


def largest_added(
    image_files: dict[str, int], parent_files: dict[str, int]
) -> list[tuple[str, int]]:
    """Bytes added per path (grouped PATH_DEPTH components deep), largest first."""
    grown: Counter[str] = Counter()
    for path, size in image_files.items():
        added = size - parent_files.get(path, 0)
        if added > 0:
            grown["/".join(path.split("/")[: PATH_DEPTH + 1])] += added
    return grown.most_common(TOP_PATHS)


def check(engine: Engine, name: str, image_id: str, size: int, baseline_text: str,
          parent_id: str | None) -> str:
    baseline = parse_size(baseline_text)
    shown = f"{size / 1e9:.2f} GB vs baseline {baseline_text} (limit {GROWTH_LIMIT} x)"
    if not over_limit(size, baseline):
        return f"size gate passed: {shown}"
    added = largest_added(_files(engine, image_id), _files(engine, parent_id) if parent_id else {})
    paths = ", ".join(f"{path} (+{grew / 1e6:.0f} MB)" for path, grew in added)
    raise StepError(name, "size", f"{shown} exceeded; largest paths added: {paths}")


def _files(engine: Engine, image_id: str) -> dict[str, int]:
    output = engine.containers.run(image_id, LIST_FILES, entrypoint=[], remove=True,
                                   network_disabled=True, stderr=False)
    files = {}
    for line in output.decode("utf-8", "replace").splitlines():
        size, _, path = line.partition("\t")
        if size.isdigit():
            files[path] = int(size)
    return files
