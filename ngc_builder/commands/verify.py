"""`ngc-builder verify MANIFEST`: through the registry API, each planned tag exists and holds
the digest in the release record; a missing or moved tag exits 1."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.prepare import registry_option
from ngc_builder.plan.dag import plan_release
from ngc_builder.publish.cosign_keys import verifying_key
from ngc_builder.publish.verify import load_published, verify_tags
from ngc_builder.services.registry import Registry


@dataclass(frozen=True)
class VerifyOptions:
    manifest: Path
    root: Path | None = None
    registry: str | None = None
    build_dir: Path = Path("build")
    as_json: bool = False


def verify_command(options: VerifyOptions, registry: Registry | None = None) -> int:
    """`registry`: the registry to ask (default: --registry, else the manifest's)."""
    chosen = registry or registry_option(options.registry)
    loaded = load_release(options.manifest, options.root)
    plan = plan_release(loaded, chosen)
    published = load_published(options.build_dir, plan.release, plan.registry.address)
    checks = verify_tags(plan, published, list(loaded.release.aliases), verifying_key())
    if options.as_json:
        print(json.dumps([check.to_dict() for check in checks], indent=2))
    for check in checks:
        ref = f"{plan.registry.address}/{check.image}:{check.tag}"
        if check.problem is None:
            if not options.as_json:
                print(f"ok       {ref} @ {check.found}")
        else:
            print(f"{ref}: {check.problem} (record: {check.expected}, registry: {check.found})",
                  file=sys.stderr)
    return EXIT_FAILED if any(check.problem for check in checks) else EXIT_OK
