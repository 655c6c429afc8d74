"""`release --validate-on slurm`: an image validated as a job of the site's cluster.

The node pulls what it validates, so the candidate is pushed first (its staging tag, never a
release tag); the release tags move only once the job passed, and images built on it start
only then. A failed or lost job leaves the candidate unpromoted and the children blocked.
"""

from __future__ import annotations

from ngc_builder.pipeline import judge
from ngc_builder.pipeline.run import ClusterValidation, Run
from ngc_builder.plan.dag import LABEL_PREFIX, ImageSpec
from ngc_builder.records.record import ImageRecord
from ngc_builder.validate.slurm import validate_on_slurm
from ngc_builder.validate.srun import Worker, workers_for

PROBE_FOLDER = "probe/"  # where a framework's rendered context holds its probes


def validate_on_cluster(run: Run, spec: ImageSpec, record: ImageRecord,
                        cluster: ClusterValidation, digest: str) -> None:
    """The pushed candidate, by digest (exactly what was pushed), judged by one Slurm job."""
    mode = cluster.gpu_mode
    if judge.already_passed(run, spec, record, mode, slurm=True):
        return
    reference = f"{spec.remote_repository(run.registry)}@{digest}"
    partition = cluster.site.partition or "default partition"
    run.ui.step(spec.name, f"validating {reference} as a Slurm job ({partition}, "
                           f"runtime {cluster.site.runtime}, GPU: {mode})")
    judge.judge(run, spec, record, mode, lambda: validate_on_slurm(
        cluster.cluster, cluster.site, reference, record.labels, mode,
        run.inputs.report_dir, spec.name, baselines=judge.baselines_for(run, spec, mode),
        workers=srun_workers(run, spec)))
    job = record.validation.slurm_job
    run.ui.step(spec.name, f"Slurm job {job}: {record.validation.verdict}")


def srun_workers(run: Run, spec: ImageSpec) -> tuple[Worker, ...]:
    """The two-process jobs the node also launches with srun: the image's framework's
    workers as this run rendered its probes (a devel image holds its framework's)."""
    label = f"{LABEL_PREFIX}.framework"
    framework = spec.labels.get(label)
    modules: dict[str, str] = {}
    for rendered in run.inputs.rendered.values():
        if rendered.spec.kind == "framework" and rendered.spec.labels.get(label) == framework:
            modules = {name.removeprefix(PROBE_FOLDER): data.decode("utf-8")
                       for name, data in rendered.files.items() if name.startswith(PROBE_FOLDER)}
            break
    return workers_for(spec.stack is not None, framework, modules)
