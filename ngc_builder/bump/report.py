"""The bump's proposal in Markdown: what a reviewer reads before any build of the month."""

from __future__ import annotations

from pathlib import Path

from ngc_builder.bump.plan import BumpResult


def proposal(result: BumpResult, lines: list[str], manifest: Path, to: str, at: str) -> str:
    moved = [change for change in result.frameworks if change.changed]
    packages = [change for change in result.packages if change.changed]
    verdict = (f"a consistent {to}: {len(moved)} framework(s) and {len(packages)} extra "
               "package(s) or tool(s) move"
               if result.ok else f"no consistent {to}: "
               f"{len(result.conflicts)} conflict(s), nothing written")
    parts = [f"# Release {to}: proposal (bump of {result.release})", "",
             f"`ngc-builder bump {manifest.as_posix()} --to {to}` at {at}: "
             f"{verdict}.", "", "## What moves and why", "",
             *(f"- {line}" for line in lines), ""]
    if result.conflicts:
        parts += ["## Conflicts", "", *(f"- {c.message}" for c in result.conflicts), ""]
    parts += ["## Review", "",
              f"- `ngc-builder check releases/{to}.yaml` (the stack check, online)",
              f"- `ngc-builder plan releases/{to}.yaml`: what rebuilds, what is reused",
              "- then `ngc-builder release` (docs/monthly.md)", ""]
    return "\n".join(parts)
