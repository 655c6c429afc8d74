"""`ngc-builder ci MANIFEST`: write (or with --check, compare) the monthly-build pipelines for
GitHub Actions and GitLab CI, one job per planned image."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.ci_jobs import pipelines, stale
from ngc_builder.plan.dag import plan_release


@dataclass(frozen=True)
class CiOptions:
    manifest: Path
    root: Path | None = None
    out_dir: Path = Path("ci")
    check: bool = False
    site: Path | None = None  # runner labels; None: NGC_SITE or ROOT/site.yaml


def ci_command(options: CiOptions) -> int:
    plan = plan_release(load_release(options.manifest, options.root))
    wanted = pipelines(plan, options.manifest.as_posix())
    if options.check:
        stale_files = stale(options.out_dir, wanted)
        for path in stale_files:
            print(f"{path}: stale, regenerate with `ngc-builder ci {options.manifest}`",
                  file=sys.stderr)
        return EXIT_FAILED if stale_files else EXIT_OK
    for pipeline in wanted:
        target = options.out_dir / pipeline.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(pipeline.text, encoding="utf-8")
        print(f"wrote {target}")
    return EXIT_OK
