"""How a release run is asked to act: its options and policy, plain data that the command
line builds before anything heavy is imported (a no-op re-run answers from these alone)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ngc_builder.assemble.osbase import Strategy


@dataclass(frozen=True)
class RunPolicy:
    """How the run may act."""

    push: bool = True
    gpu_mode: str = "none"
    jobs: int = 3
    force: bool = False  # move release tags that point elsewhere (recorded)
    aliases: tuple[str, ...] = ()
    # False: build every image anew even if the registry holds its key (rebuild, bench).
    reuse_published: bool = True
    no_cache: bool = False  # build without the engine's layer cache
    # False (--no-promote): candidates pushed and staged by key, no release tag moved; a later
    # gate (a GPU job) pulls them, validates them and promotes them.
    promote: bool = True
    # The images asked for (--only; empty: all). The others are only built on: one the
    # registry holds staged is taken as its own job left it (pipeline/reuse.py).
    targets: frozenset[str] = frozenset()
    # Other platforms built and staged but not validated here (--defer-validation, only with
    # --no-promote): a job on that platform's own nodes judges them before anything promotes.
    deferred: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ReleaseOptions:
    """What a release run is asked to do. `policy` is how it may act; its `gpu_mode` and
    `aliases` are the host's and the manifest's, set by the flow."""

    manifest: Path
    root: Path | None = None
    only: list[str] = field(default_factory=list)
    registry: str | None = None
    policy: RunPolicy = field(default_factory=RunPolicy)
    build_dir: Path = Path("build")
    os_strategy: Strategy = "auto"
    stack_check: bool = True
    show_logs: bool = True
    as_json: bool = False
    offline: bool = False  # hermetic: an internal network, packages only from the cache
    site: Path | None = None  # the site file (build hosts, Slurm); None: NGC_SITE or ROOT/site.yaml
    validate_on: str = "engine"  # or "slurm": a job of the site's cluster per image
    on: str = "engine"  # or "slurm": every image built as a job of the site's cluster
