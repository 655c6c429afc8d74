"""`ngc-builder ci MANIFEST`: write (or with --check, compare) the monthly-build pipelines for
GitHub Actions and GitLab CI where the services read them, in the project root by default."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.errors import CONTROL, InputError, Problem
from ngc_builder.files import write_atomic
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.site import load_site
from ngc_builder.plan.ci_jobs import pipelines, stale
from ngc_builder.plan.dag import plan_release


@dataclass(frozen=True)
class CiOptions:
    manifest: Path
    root: Path | None = None
    out_dir: Path | None = None  # None: the project root (where the services read the files)
    check: bool = False
    site: Path | None = None  # runner labels; None: NGC_SITE or ROOT/site.yaml


def manifest_in_jobs(manifest: Path, root: Path) -> str:
    """The manifest as the jobs name it: they run in the project root. A newline would end
    the header comment and start YAML of its own, and GitHub would fill `${{ secrets.X }}`
    into a job's script, so such a path is refused here, before a file is written."""
    text = str(manifest)
    if CONTROL.search(text) or "${{" in text:  # GitHub expands ${{ }} before the shell runs
        raise InputError([Problem(repr(text)[1:-1], 1, "(path)", "a control character or "
                                  "`${{` in the path: it cannot go into a pipeline")])
    try:
        return manifest.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:  # a manifest outside the project: only its own path names it
        return manifest.as_posix()


def ci_command(options: CiOptions) -> int:
    loaded = load_release(options.manifest, options.root)
    site = load_site(options.site, loaded.root)
    wanted = pipelines(plan_release(loaded), manifest_in_jobs(options.manifest, loaded.root),
                       site.ci)
    out_dir = options.out_dir or loaded.root
    if options.check:
        stale_files = stale(out_dir, wanted)
        for path in stale_files:
            print(f"{path}: stale, regenerate with `ngc-builder ci {options.manifest}`",
                  file=sys.stderr)
        return EXIT_FAILED if stale_files else EXIT_OK
    for pipeline in wanted:
        target = out_dir / pipeline.path
        write_atomic(target, pipeline.text)
        print(f"wrote {target}")
    return EXIT_OK
