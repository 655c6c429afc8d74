"""Where the builder runs, as opposed to what it builds: the site file (`site.yaml` beside
`releases/`, or `--site FILE` / `NGC_SITE`). A release manifest changes every month; the build
hosts, the GPU cluster and the CI runners of a site do not.

One release process drives one engine (DOCKER_HOST, or the local socket). A site that outgrows
one machine hands the release's graph to the scheduler it runs: Slurm jobs, CI jobs.

```yaml
slurm:                   # `validate IMAGE --slurm`, `release --on slurm`
  partition: gpu         # validation jobs, and image jobs of CUDA images
  account: dl-release
  time_limit: "00:30:00"
  gpus: 1
  runtime: docker        # docker | pyxis | host | charliecloud
  build_partition: cpu   # `release --on slurm`: image jobs without GPUs (default: partition)
  build_time_limit: "04:00:00"
  cache_address: 10.0.0.5  # where the nodes' builds reach the package cache (default: each
                           # job serves it on its node's engine)
  exclusive: true        # a node to itself per image job (false: share nodes, e.g. 8-GPU ones)
ci:                      # runner labels / tags of the generated pipelines
  runner_labels: [self-hosted, linux, docker]
  gpu_runner_labels: [self-hosted, linux, docker, gpu]
```
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, IPvAnyAddress

from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.load import load_model
from ngc_builder.manifest.paths import SITE_FILE as SITE_FILE
from ngc_builder.services.environment import VARIABLES, setting

SLURM_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:,-]{0,127}")
TIME_LIMIT_RE = re.compile(r"([0-9]+-)?[0-9]{1,2}(:[0-9]{2}){0,2}")
LABEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,63}")
VARIABLE_RE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


def _matching(pattern: re.Pattern[str], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"not a valid {what}: {value[:80]!r}")
        return value
    return AfterValidator(check)


def _not_ours(value: str) -> str:
    """The pipelines export these names into every job: one that starts with NGC_ and is not
    a setting of ours would be refused by every command there (services/environment.py)."""
    if value.startswith("NGC_") and value not in VARIABLES:
        raise ValueError(f"{value!r} starts with NGC_, which names ngc-builder's settings: "
                         "name it without NGC_")
    return value


SlurmWord = Annotated[str, _matching(SLURM_WORD_RE, "Slurm name")]
TimeLimit = Annotated[str, _matching(TIME_LIMIT_RE, "Slurm time limit ([D-]HH:MM:SS)")]
Label = Annotated[str, _matching(LABEL_RE, "runner label")]
Variable = Annotated[str, _matching(VARIABLE_RE, "CI variable name (A-Z, 0-9, _)"),
                     AfterValidator(_not_ours)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SlurmSite(Strict):
    """How validation jobs are submitted to the site's Slurm cluster."""

    partition: SlurmWord | None = None
    account: SlurmWord | None = None
    qos: SlurmWord | None = None
    time_limit: TimeLimit = "00:30:00"
    gpus: int = Field(default=1, ge=0, le=64)  # --gres=gpu[:type]:N; 0 on CPU-only clusters
    gpu_type: SlurmWord | None = None
    runtime: Literal["docker", "pyxis", "host", "charliecloud"] = "docker"
    python: str | None = None  # runtime host: the site environment's interpreter on the node
    workdir: Path | None = None  # shared between submit host and nodes (default: build dir)
    poll_seconds: float = Field(default=5.0, gt=0, le=300)
    # `release --on slurm` (pipeline/on_slurm.py): where the image jobs run.
    build_partition: SlurmWord | None = None  # jobs that need no GPU (default: `partition`)
    build_time_limit: TimeLimit = "04:00:00"
    cache_address: IPvAnyAddress | None = None  # the package cache as the nodes' builds reach it
    # A node to itself per image job (--exclusive): a build uses every core and the node's one
    # engine, and siblings then spread over nodes instead of packing onto the first one.
    exclusive: bool = True
    # The partition of the cluster's arm64 nodes (Grace): an arm64 row's validation runs there
    # as a job of its own, full tier, once its image's job staged it (pipeline/slurm_platforms.py).
    arm64_partition: SlurmWord | None = None


class CiSite(Strict):
    """Runner labels (GitHub) and tags (GitLab) of the generated pipelines."""

    runner_labels: list[Label] = Field(default_factory=lambda: ["self-hosted", "linux", "docker"])
    gpu_runner_labels: list[Label] = Field(
        default_factory=lambda: ["self-hosted", "linux", "docker", "gpu"])
    gitlab_tags: list[Label] = Field(default_factory=lambda: ["docker"])
    gitlab_gpu_tags: list[Label] = Field(default_factory=lambda: ["docker", "gpu"])
    registry_variable: Variable = "NGC_REGISTRY"
    username_secret: Variable = "NGC_REGISTRY_USER"
    password_secret: Variable = "NGC_REGISTRY_TOKEN"
    # The release's cosign key and its password (docs/signing.md): GitHub maps them into the
    # steps that promote or verify; on GitLab they are the File and masked variables of these
    # names.
    signing_key_secret: Variable = "NGC_SIGNING_KEY"
    signing_password_secret: Variable = "NGC_SIGNING_PASSWORD"


ENGINES_GONE = ("the build hosts of `engines:` are gone: one release drives one engine "
                "(DOCKER_HOST); a release spreads over machines as the jobs of the site's CI "
                "runners or Slurm cluster (docs/scale.md)")


def _no_engines(value: object) -> None:
    """An earlier site file's `engines:` list: refused in one line naming what replaced it."""
    if value:
        raise ValueError(ENGINES_GONE)


class Site(Strict):
    engines: Annotated[object, AfterValidator(_no_engines)] = None
    slurm: SlurmSite | None = None
    ci: CiSite = Field(default_factory=CiSite)


def site_path(explicit: Path | None, root: Path) -> Path | None:
    """The site file in force: --site, else NGC_SITE, else ROOT/site.yaml when there. One
    there that is not a regular file (a FIFO, a link to /dev/zero) is in force too: the
    loader refuses it in one line rather than the run going on without the site."""
    if explicit is not None:
        return explicit
    if configured := setting("NGC_SITE"):
        return Path(configured)
    default = root / SITE_FILE
    return default if os.path.lexists(default) else None


def load_site(explicit: Path | None, root: Path) -> Site:
    """The site (defaults when there is no file); InputError naming file:line: field."""
    path = site_path(explicit, root)
    if path is None:
        return Site()
    return load_model(path, Site, str(path))[0]


def slurm_site(explicit: Path | None, root: Path) -> SlurmSite:
    """The site's slurm: section; an input error naming the site file without one."""
    path = site_path(explicit, root)
    site = load_site(explicit, root)
    if site.slurm is None:
        where = str(path) if path is not None else f"{root / SITE_FILE} (no site file)"
        raise InputError([Problem(where, 1, "slurm", "no slurm: section; a Slurm job needs "
                                  "the cluster to submit to")])
    return site.slurm
