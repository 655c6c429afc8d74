"""The GitHub Actions workflow of the monthly build (`.github/workflows/monthly-release.yml`).

Expressions (`${{ ... }}`) appear only in `env:`, `if:` and `with:`, never in a `run:` script:
secrets and variables reach the shell as environment variables, so nothing a variable holds
can become shell text, and actionlint has nothing to flag.
"""

from __future__ import annotations

from typing import Any

from ngc_builder.plan.ci_common import (
    CHECKS,
    EXTENDED,
    EXTENDED_MINUTES,
    EXTENDED_TESTS,
    GATES,
    MONTHLY,
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
    login_command,
    publish_artifacts,
    publish_commands,
)
from ngc_builder.plan.dag import ImageSpec

CHECKOUT = "actions/checkout@v5"
UPLOAD = "actions/upload-artifact@v6"
DOWNLOAD = "actions/download-artifact@v7"
JUNIT_REPORT = "mikepenz/action-junit-report@v6"
TEST_REPORT = "test-report"
NOT_A_PR = "github.event_name != 'pull_request'"
# A job-private Docker config (the runner empties RUNNER_TEMP after each job), so the login
# never outlives the job on a self-hosted runner.
PRIVATE_DOCKER_CONFIG = ['export DOCKER_CONFIG="$RUNNER_TEMP/docker-config"',
                         'echo "DOCKER_CONFIG=$DOCKER_CONFIG" >> "$GITHUB_ENV"']


def _checkout() -> dict[str, Any]:
    # No token left in .git/config on a self-hosted runner: no job pushes to the repository.
    return {"uses": CHECKOUT, "with": {"persist-credentials": False}}


def _login(ctx: CiContext) -> dict[str, Any]:
    site = ctx.site
    return {"name": "Log in to the registry",
            "env": {name: f"${{{{ secrets.{name} }}}}"
                    for name in (site.username_secret, site.password_secret)},
            "run": "\n".join([*PRIVATE_DOCKER_CONFIG, login_command(site)])}


def _signing_env(ctx: CiContext) -> dict[str, str]:
    """The release's key for the steps that promote (and so sign) or verify: from the
    secret store into the step's environment only, read by the builder as `env://`."""
    site = ctx.site
    return {"NGC_SIGNING_KEY": "env://NGC_SIGNING_KEY_PEM",
            "NGC_SIGNING_KEY_PEM": f"${{{{ secrets.{site.signing_key_secret} }}}}",
            "NGC_SIGNING_PASSWORD": f"${{{{ secrets.{site.signing_password_secret} }}}}"}


def _upload(name: str, paths: list[str]) -> dict[str, Any]:
    return {"name": "Keep the record, logs and reports", "if": "always()", "uses": UPLOAD,
            "with": {"name": f"{name}-results", "path": "\n".join(paths),
                     "if-no-files-found": "ignore"}}


def _runner_job(needs: list[str], labels: list[str], gpu: str,
                steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"needs": needs, "if": NOT_A_PR, "runs-on": labels, "env": {"NGC_GPU": gpu},
            "steps": steps}


def _image_job(ctx: CiContext, spec: ImageSpec) -> dict[str, Any]:
    needs = [job_id(spec.parent)] if spec.parent else list(GATES)
    # GPU checks run in the gpu- jobs. With NGC_GPU=required here, a published parent
    # (validated without GPUs) would be pulled and validated again on this runner.
    return _runner_job(needs, ctx.site.runner_labels, "none", [
        _checkout(), {"run": SETUP}, _login(ctx),
        {"name": f"Build, validate and push {spec.name}", "env": _signing_env(ctx),
         "run": image_command(ctx, spec)},
        _upload(job_id(spec.name), image_artifacts(ctx))])


def _gpu_job(ctx: CiContext, spec: ImageSpec) -> dict[str, Any]:
    return _runner_job(gpu_needs(ctx, spec), ctx.site.gpu_runner_labels, "required", [
        _checkout(), {"run": SETUP}, _login(ctx),
        {"name": f"Validate {spec.name} on GPUs, then promote it", "env": _signing_env(ctx),
         "run": "\n".join(gpu_commands(ctx, spec))},
        {"name": "Remove the pulled images", "if": "always()", "run": gpu_cleanup(ctx)},
        _upload(gpu_job_id(spec.name), image_artifacts(ctx))])


def _publish_job(ctx: CiContext, validations: list[str]) -> dict[str, Any]:
    return _runner_job(validations, ctx.site.runner_labels, "none", [
        _checkout(), {"run": SETUP}, _login(ctx),
        {"name": "Verify and report", "env": _signing_env(ctx),
         "run": "\n".join(publish_commands(ctx))},
        _upload(PUBLISH, publish_artifacts(ctx))])


def _test_report_job(ctx: CiContext, validations: list[str]) -> dict[str, Any]:
    """Every image's and GPU job's JUnit as one check run; the only job that may write
    checks, and it runs no project code."""
    return {"needs": validations, "if": f"${{{{ !cancelled() && {NOT_A_PR} }}}}",
            "runs-on": "ubuntu-latest", "permissions": {"contents": "read", "checks": "write"},
            "steps": [{"uses": DOWNLOAD, "with": {"path": "results", "pattern": "*-results"}},
                      {"uses": JUNIT_REPORT, "with": {
                          "report_paths": "results/*/reports/*.junit.xml",
                          "check_name": f"monthly release {ctx.plan.release}: validation"}}]}


def _checks_job(ctx: CiContext) -> dict[str, Any]:
    # The project's own suite installs an engine and a test registry: a throwaway VM's job.
    return {"runs-on": "ubuntu-latest",
            "steps": [_checkout(), {"run": "sudo --preserve-env bash .ci/run"},
                      {"run": check_command(ctx)}]}


def _extended_job() -> dict[str, Any]:
    return {"needs": [CHECKS], "if": NOT_A_PR, "runs-on": "ubuntu-latest",
            "timeout-minutes": EXTENDED_MINUTES,
            "steps": [_checkout(), {"run": f"sudo --preserve-env {EXTENDED_TESTS}"}]}


def workflow(ctx: CiContext) -> str:
    jobs: dict[str, Any] = {CHECKS: _checks_job(ctx), EXTENDED: _extended_job()}
    jobs.update({job_id(spec.name): _image_job(ctx, spec) for spec in ctx.plan.images})
    jobs.update({gpu_job_id(spec.name): _gpu_job(ctx, spec) for spec in gpu_images(ctx.plan)})
    validations = [name for name in jobs if name not in GATES]
    jobs[PUBLISH] = _publish_job(ctx, validations)
    jobs[TEST_REPORT] = _test_report_job(ctx, validations)
    registry = ctx.site.registry_variable
    document = {"name": f"monthly release {ctx.plan.release}",
                "on": {"schedule": [{"cron": MONTHLY}], "workflow_dispatch": {},
                       "pull_request": {}},
                "permissions": {"contents": "read"},
                "env": {registry: f"${{{{ vars.{registry} }}}}"},
                "jobs": jobs}
    return header(ctx.manifest) + dump(document)
