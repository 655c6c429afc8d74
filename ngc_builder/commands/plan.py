"""`ngc-builder plan MANIFEST`: the dry run. Per image: build / reuse / skip and
push+promote / promote / none, with the reasons."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.manifest.models import RELEASE_RE
from ngc_builder.pipeline.decisions import Decision, decide
from ngc_builder.pipeline.prepare import prepare, registry_option
from ngc_builder.records.record import ReleaseRecord, load_record, record_path
from ngc_builder.render.content_keys import content_keys
from ngc_builder.services.engine import Engine, connect_if_running
from ngc_builder.services.registry import Registry


@dataclass(frozen=True)
class PlanOptions:
    manifest: Path
    root: Path | None = None
    registry: str | None = None
    build_dir: Path = Path("build")
    as_json: bool = False


def plan_command(options: PlanOptions, engine: Engine | None = None,
                 registry: Registry | None = None) -> int:
    """`engine`: where local images are looked for (default: the local engine, if it runs);
    `registry`: what is published (default: --registry, else the manifest's)."""
    prepared = prepare(options.manifest, options.root, stack_check=False,
                       registry=registry or registry_option(options.registry))
    plan = prepared.plan
    keys = content_keys(prepared.loaded, plan, prepared.rendered_by_name(), prepared.lock,
                        prepared.platform_renders())
    stored = load_record(record_path(options.build_dir, plan.release)) or \
        earlier_record(options.build_dir, plan.release)
    record = stored.for_registry(plan.registry.address) if stored is not None else None
    decisions = decide(plan, keys, record, engine or connect_if_running())
    if options.as_json:
        print(json.dumps({"release": plan.release, "registry": plan.registry.address,
                          "images": [d.to_dict() for d in decisions]}, indent=2))
    else:
        _print(decisions)
    return EXIT_OK


def earlier_record(build_dir: Path, release: str) -> ReleaseRecord | None:
    """The newest earlier release's record in `build_dir`: a new month's plan, before its
    first run, says what moved since then."""
    earlier = sorted(path.parent.name for path in build_dir.glob("*/release.json")
                     if RELEASE_RE.fullmatch(path.parent.name) and path.parent.name < release)
    return load_record(record_path(build_dir, earlier[-1])) if earlier else None


def _print(decisions: list[Decision]) -> None:
    for d in decisions:
        print(f"{d.image:<22} {d.build:<6} {d.push:<13} FROM {d.parent}  "
              f"[{', '.join(d.platforms)}]")
        for reason in d.reasons:
            print(f"{'':<22} - {reason}")
