"""CI pipelines for the monthly build, generated from the release manifest and the site's `ci:`
section, written where the services read them: one job per image, each needing its parent's
job; a GPU validation job per image with a CUDA stack; a last job that verifies and reports.
Jobs can run on different runners: an image's job pushes it, and its children's jobs find it
by its content key. An image with a GPU job is only staged by its own job (`--no-promote`);
its GPU job pulls that candidate, validates it with GPUs and promotes it, so a failed GPU
check holds the release tag back. docs/ci.md says how a project adopts them.

`ngc-builder ci RELEASE --check` fails when the committed files differ from what the manifest
gives (a new image without a job, a removed one still built, runner labels changed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ngc_builder.manifest.site import CiSite
from ngc_builder.plan.ci_bump import github_workflow
from ngc_builder.plan.ci_common import CiContext, dump, header
from ngc_builder.plan.ci_github import workflow
from ngc_builder.plan.ci_gitlab import FILE_NAME, include_file
from ngc_builder.plan.dag import ReleasePlan

GITHUB_FILE = Path(".github") / "workflows" / "monthly-release.yml"
BUMP_FILE = Path(".github") / "workflows" / "monthly-bump.yml"
GITLAB_FILE = Path(".gitlab") / "ci" / FILE_NAME
ACTIONLINT_FILE = Path(".github") / "actionlint.yaml"


@dataclass(frozen=True)
class Pipeline:
    path: Path  # relative to the project root
    text: str


def actionlint_config(ctx: CiContext) -> str:
    """actionlint's config: the self-hosted runners' labels, and the one `vars.` name the
    workflow reads (so a typo in either is a finding, not a job that never starts)."""
    site = ctx.site
    labels = sorted({*site.runner_labels, *site.gpu_runner_labels})
    document = {"self-hosted-runner": {"labels": labels},
                "config-variables": [site.registry_variable]}
    return header(ctx.manifest) + dump(document)


def pipelines(plan: ReleasePlan, manifest: str, site: CiSite) -> list[Pipeline]:
    """`manifest` as the jobs name it: relative to the project root, where they run."""
    ctx = CiContext(plan, manifest, site)
    return [Pipeline(GITHUB_FILE, workflow(ctx)),
            Pipeline(BUMP_FILE, github_workflow(ctx)),
            Pipeline(ACTIONLINT_FILE, actionlint_config(ctx)),
            Pipeline(GITLAB_FILE, include_file(ctx, GITLAB_FILE.as_posix()))]


def stale(out_dir: Path, wanted: list[Pipeline]) -> list[str]:
    """The generated files that are missing or differ from what the manifest gives."""
    return [str(out_dir / p.path) for p in wanted
            if not (out_dir / p.path).is_file()
            or (out_dir / p.path).read_text(encoding="utf-8") != p.text]
