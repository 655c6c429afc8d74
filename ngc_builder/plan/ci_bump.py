"""The monthly bump as CI jobs: on the 20th, propose next month's release as a pull / merge
request (a branch with the new manifest and its lock, the bump's report as its description),
so a person reviews the month's changes before any build (docs/monthly.md).

GitHub: a workflow of its own (`.github/workflows/monthly-bump.yml`), its token allowed to
write contents and pull requests only. GitLab: a job in the same include file, started by a
schedule with `NGC_BUMP=1` (the release's jobs skip that schedule); it pushes with a project
token named by a variable and opens the merge request through GitLab's push options.
"""

from __future__ import annotations

import shlex
from typing import Any

from ngc_builder.plan.ci_common import CLI, SETUP, CiContext, dump, header

BUMP_MONTHLY = "0 3 20 * *"  # the 20th: ten days to review before the 1st's release
BUMP_SCHEDULE = '$CI_PIPELINE_SOURCE == "schedule" && $NGC_BUMP == "1"'
TOKEN_VARIABLE = "NGC_BUMP_TOKEN"  # GitLab: a project access token allowed to push branches
BOT = ['-c user.name="ngc-builder bump"',
       '-c user.email="ngc-builder-bump@users.noreply.invalid"']


def next_release(release: str) -> str:
    """'26.11' -> '26.12', '26.12' -> '27.01'."""
    year, month = (int(part) for part in release.split("."))
    return f"{year + month // 12:02d}.{month % 12 + 1:02d}"


def report_file(ctx: CiContext) -> str:
    return f"bump-{next_release(ctx.plan.release)}.md"


def branch(ctx: CiContext) -> str:
    return f"bump/{next_release(ctx.plan.release)}"


def title(ctx: CiContext) -> str:
    return f"Release {next_release(ctx.plan.release)}: monthly bump of {ctx.plan.release}"


def bump_lines(ctx: CiContext) -> list[str]:
    """Propose, then commit the new manifest and its lock on the bump branch."""
    new = next_release(ctx.plan.release)
    folder = ctx.manifest.rsplit("/", 1)[0] if "/" in ctx.manifest else "."
    files = " ".join(shlex.quote(f"{folder}/{new}.{suffix}") for suffix in ("yaml", "lock.json"))
    return [f"{CLI} bump {ctx.manifest_arg} --to {new} --report {report_file(ctx)}",
            f"git switch -c {branch(ctx)}",
            f"git add {files}",
            f"git {' '.join(BOT)} commit -m '{title(ctx)}'"]


def github_workflow(ctx: CiContext) -> str:
    publish = [f"git push --force origin {branch(ctx)}",
               f"gh pr create --head {branch(ctx)} --title '{title(ctx)}' "
               f"--body-file {report_file(ctx)}"]
    keep = {"name": "Keep the proposal", "if": "always()", "uses": "actions/upload-artifact@v6",
            "with": {"name": "bump-proposal", "path": report_file(ctx),
                     "if-no-files-found": "ignore"}}
    job = {"runs-on": list(ctx.site.runner_labels),
           "steps": [{"uses": "actions/checkout@v5"}, {"run": SETUP},
                     {"name": "Propose the release", "run": "\n".join(bump_lines(ctx))},
                     keep,
                     {"name": "Open the pull request",
                      "env": {"GH_TOKEN": "${{ github.token }}"},
                      "run": "\n".join(publish)}]}
    document = {"name": f"monthly bump {ctx.plan.release} -> {next_release(ctx.plan.release)}",
                "on": {"schedule": [{"cron": BUMP_MONTHLY}], "workflow_dispatch": {}},
                "permissions": {"contents": "write", "pull-requests": "write"},
                "jobs": {"bump": job}}
    return header(ctx.manifest) + dump(document)


def gitlab_job(ctx: CiContext) -> dict[str, Any]:
    # The token reaches git through a credential helper that reads the variable: never in a
    # URL, where it would be logged and kept in .git/config.
    helper = ("-c credential.helper='!f() { echo username=ngc-bump; "
              f"echo password=${TOKEN_VARIABLE}; }}; f'")
    push = (f'git {helper} push --force "https://$CI_SERVER_HOST/$CI_PROJECT_PATH.git" '
            f"HEAD:{branch(ctx)}"
            " -o merge_request.create -o merge_request.target=\"$CI_DEFAULT_BRANCH\""
            f" -o merge_request.title='{title(ctx)}'"
            f" -o merge_request.description=\"$(cat {report_file(ctx)})\"")
    return {"rules": [{"if": BUMP_SCHEDULE}], "tags": ctx.site.gitlab_tags,
            "script": [SETUP, *bump_lines(ctx), push],
            "artifacts": {"when": "always", "expire_in": "30 days",
                          "paths": [report_file(ctx)]}}
