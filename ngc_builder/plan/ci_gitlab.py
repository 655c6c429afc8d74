"""The GitLab CI jobs of the monthly build, as an include file
(`.gitlab/ci/monthly-release.gitlab-ci.yml`) that a project's `.gitlab-ci.yml` names in one line.

An include merges into the project's own pipeline, so this file sets no `stages:` or
`workflow:` of its own (they would replace the project's): its jobs stand in the default
`test` stage and run in `needs:` order, and their names carry an `ngc:` prefix. No YAML
anchors: each job reads on its own.
"""

from __future__ import annotations

from typing import Any

from ngc_builder.manifest.site import CiSite
from ngc_builder.plan.ci_bump import gitlab_job
from ngc_builder.plan.ci_common import (
    CHECKS,
    EXTENDED,
    EXTENDED_MINUTES,
    EXTENDED_TESTS,
    GATES,
    PUBLISH,
    SETUP,
    CiContext,
    check_command,
    dump,
    gpu_cleanup,
    gpu_commands,
    gpu_images,
    gpu_job_id,
    gpu_needs,
    header,
    image_artifacts,
    image_command,
    job_id,
    junit_glob,
    login_command,
    publish_artifacts,
    publish_commands,
)
from ngc_builder.plan.dag import ImageSpec

PREFIX = "ngc:"
FILE_NAME = "monthly-release.gitlab-ci.yml"
MERGE_REQUEST = '$CI_PIPELINE_SOURCE == "merge_request_event"'
# The bump's own schedule (NGC_BUMP=1, ci_bump.py) starts the bump job only.
RELEASE_SOURCES = ['$CI_PIPELINE_SOURCE == "schedule" && $NGC_BUMP != "1"',
                   '$CI_PIPELINE_SOURCE == "web"']
# A job-private Docker config, removed when the job ends, so the login never outlives it on
# a shell runner.
PRIVATE_DOCKER_CONFIG = "$CI_PROJECT_DIR/.docker-config"
# GitLab writes a File variable readable by others, and the builder refuses a signing key
# anyone else could read (docs/signing.md): the job makes it its own first. Without the
# variable the builder would sign with a key it makes on the runner, which no user has (and
# another for each job on fresh runners): the job stops instead, naming what is missing.
PRIVATE_KEY_FILE = ('if [ -n "$NGC_SIGNING_KEY" ] && [ -f "$NGC_SIGNING_KEY" ]; then '
                    'chmod 600 "$NGC_SIGNING_KEY"; else echo "ngc-builder: no NGC_SIGNING_KEY '
                    'File variable: the release\'s cosign key (docs/ci.md)" >&2; exit 1; fi')
KEEP_FOR = "30 days"


def name(job: str) -> str:
    return PREFIX + job


def _rules(*sources: str) -> list[dict[str, str]]:
    return [{"if": source} for source in sources]


def _needs(jobs: list[str]) -> list[dict[str, Any]]:
    # No artifacts from the jobs needed: a parent's release.json would become this job's
    # record, naming image IDs of another runner.
    return [{"job": name(job), "artifacts": False} for job in jobs]


def _artifacts(ctx: CiContext, paths: list[str]) -> dict[str, Any]:
    return {"when": "always", "expire_in": KEEP_FOR, "paths": paths,
            "reports": {"junit": junit_glob(ctx)}}


def _runner_job(ctx: CiContext, needs: list[str], gpu: bool,
                script: list[str]) -> dict[str, Any]:
    site = ctx.site
    # GPU checks run in the gpu: jobs. With NGC_GPU=required on a build runner, a published
    # parent (validated without GPUs) would be pulled and validated again there.
    return {"needs": _needs(needs), "rules": _rules(*RELEASE_SOURCES),
            "tags": site.gitlab_gpu_tags if gpu else site.gitlab_tags,
            "variables": {"NGC_GPU": "required" if gpu else "none",
                          "DOCKER_CONFIG": PRIVATE_DOCKER_CONFIG, **_signing(site)},
            "script": [SETUP, login_command(site), PRIVATE_KEY_FILE, *script],
            "after_script": ['rm -rf "$DOCKER_CONFIG"']}


def _signing(site: CiSite) -> dict[str, str]:
    """The release's key: the project's File variable (and masked password) of the names the
    builder reads, mapped only when the site names them otherwise (docs/signing.md)."""
    wanted = {"NGC_SIGNING_KEY": site.signing_key_secret,
              "NGC_SIGNING_PASSWORD": site.signing_password_secret}
    return {name: f"${source}" for name, source in wanted.items() if name != source}


def _image_job(ctx: CiContext, spec: ImageSpec) -> dict[str, Any]:
    needs = [job_id(spec.parent)] if spec.parent else list(GATES)
    job = _runner_job(ctx, needs, False, [image_command(ctx, spec)])
    return {**job, "artifacts": _artifacts(ctx, image_artifacts(ctx))}


def _gpu_job(ctx: CiContext, spec: ImageSpec) -> dict[str, Any]:
    job = _runner_job(ctx, gpu_needs(ctx, spec), True, gpu_commands(ctx, spec))
    job["after_script"] = [*job["after_script"], gpu_cleanup(ctx)]
    return {**job, "artifacts": _artifacts(ctx, image_artifacts(ctx))}


def _publish_job(ctx: CiContext, validations: list[str]) -> dict[str, Any]:
    job = _runner_job(ctx, validations, False, publish_commands(ctx))
    return {**job, "artifacts": _artifacts(ctx, publish_artifacts(ctx))}


def _checks_job(ctx: CiContext) -> dict[str, Any]:
    return {"rules": _rules(MERGE_REQUEST, *RELEASE_SOURCES), "tags": ctx.site.gitlab_tags,
            "script": ["bash .ci/run", check_command(ctx)]}


def _extended_job(ctx: CiContext) -> dict[str, Any]:
    return {"needs": _needs([CHECKS]), "rules": _rules(*RELEASE_SOURCES),
            "tags": ctx.site.gitlab_tags, "timeout": f"{EXTENDED_MINUTES} minutes",
            "script": [EXTENDED_TESTS]}


def include_file(ctx: CiContext, path: str) -> str:
    jobs: dict[str, Any] = {CHECKS: _checks_job(ctx), EXTENDED: _extended_job(ctx)}
    jobs.update({job_id(spec.name): _image_job(ctx, spec) for spec in ctx.plan.images})
    jobs.update({gpu_job_id(spec.name): _gpu_job(ctx, spec) for spec in gpu_images(ctx.plan)})
    validations = [job for job in jobs if job not in GATES]
    jobs[PUBLISH] = _publish_job(ctx, validations)
    jobs["bump"] = gitlab_job(ctx)
    note = f"Named by the project's .gitlab-ci.yml in one line: include: {path}"
    return header(ctx.manifest, note) + dump({name(job): body for job, body in jobs.items()})
