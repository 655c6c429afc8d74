"""`ngc-builder release MANIFEST`: check -> plan -> render -> build -> validate -> push ->
promote, with a record and a summary table."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ngc_builder.build.image import project_source
from ngc_builder.build.osbase import Strategy, locked_bootstrap
from ngc_builder.cache.network import BuildNetwork
from ngc_builder.cache.store import default_root, open_cache
from ngc_builder.commands.guard import EXIT_FAILED, EXIT_OK
from ngc_builder.commands.prepare import Prepared, prepare, registry_option, require_closure
from ngc_builder.commands.validate import slurm_site
from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.site import load_site, site_path
from ngc_builder.pipeline.cache import ready_cache
from ngc_builder.pipeline.console import Ui, print_summary
from ngc_builder.pipeline.hosts import BuildHosts
from ngc_builder.pipeline.interrupt import Interrupted, stop_run, stop_signals_raise
from ngc_builder.pipeline.release import (
    Preflight,
    host_defects,
    obtain_os_images,
    open_record,
    run_images,
)
from ngc_builder.pipeline.run import (
    ClusterValidation,
    Run,
    RunInputs,
    RunPolicy,
    RunServices,
    RunState,
)
from ngc_builder.pipeline.site_hosts import (
    OpenHost,
    open_site_engine,
    open_site_hosts,
    ready_other_hosts,
    sweep_stale,
)
from ngc_builder.publish.keys import SigningKey, signing_key
from ngc_builder.records.evidence import check_evidence
from ngc_builder.records.lock import release_lock
from ngc_builder.records.record import ImageRecord, ReleaseRecord, record_path
from ngc_builder.render.keys import release_keys
from ngc_builder.services.engine import Engine, connect, gpu_mode
from ngc_builder.services.registry import Registry
from ngc_builder.services.slurm import SlurmCluster, SubprocessSlurm
from ngc_builder.validate import baselines
from ngc_builder.validate.preflight import host_preflight


@dataclass(frozen=True)
class ReleaseOptions:
    manifest: Path
    root: Path | None = None
    only: list[str] = field(default_factory=list)
    registry: str | None = None
    push: bool = True
    build_dir: Path = Path("build")
    os_strategy: Strategy = "auto"
    stack_check: bool = True
    show_logs: bool = True
    as_json: bool = False
    jobs: int = 2
    force: bool = False
    # False: build every image anew even if the registry holds its content key (rebuild).
    reuse_published: bool = True
    no_cache: bool = False
    offline: bool = False  # hermetic: an internal network, packages only from the cache
    site: Path | None = None  # the site file (build hosts, Slurm); None: NGC_SITE or ROOT/site.yaml
    validate_on: str = "engine"  # or "slurm": a job of the site's cluster per image
    promote: bool = True  # False: push and stage candidates by key, move no release tag


@dataclass(frozen=True)
class Host:
    """What a release finds on the machine it runs on; tests hand in their own."""

    connect: Callable[[], Engine] = connect
    gpu_mode: Callable[[], str] = gpu_mode
    preflight: Preflight = host_preflight
    # One build host of the site file: its engine and GPU mode (asked of that host).
    open_host: OpenHost = open_site_engine
    slurm: Callable[[], SlurmCluster] = SubprocessSlurm  # the site's cluster


def release_command(options: ReleaseOptions, host: Host = Host(),
                    registry: Registry | None = None) -> int:
    """`registry`: where to publish (default: --registry, else the manifest's)."""
    with stop_signals_raise():
        return _release(options, host, registry)


def _release(options: ReleaseOptions, host: Host, registry: Registry | None) -> int:
    prepared = prepare(options.manifest, options.root, only=options.only,
                       registry=registry or registry_option(options.registry),
                       stack_check=options.stack_check)
    cluster = _cluster(options, prepared, host)
    release_dir = options.build_dir / prepared.plan.release
    with release_lock(release_dir, lambda text: print(f"note: {text}", file=sys.stderr)):
        record = _locked_run(options, prepared, release_dir, host, cluster)
    if record is None:
        return EXIT_FAILED
    selected = [record.images[i.name] for i in prepared.plan.select(options.only)
                if i.name in record.images]
    _summary(record, selected, options.as_json)
    return EXIT_FAILED if any(image.breaks_the_run for image in selected) else EXIT_OK


def _cluster(options: ReleaseOptions, prepared: Prepared,
             host: Host) -> ClusterValidation | None:
    """--validate-on slurm: the site's cluster, refused up front where it cannot judge the
    release's images (no push for the node to pull, runtime host validates no image)."""
    if options.validate_on != "slurm":
        return None
    site = slurm_site(options.site, prepared.loaded.root)
    if not options.push:  # the CLI refuses it too; here for callers of release_command
        raise InputError([Problem("release", 0, "--validate-on slurm", "needs the push: the "
                                  "node pulls the candidate it validates")])
    if site.runtime == "host":
        where = str(site_path(options.site, prepared.loaded.root))
        raise InputError([Problem(where, 1, "slurm.runtime", "host validates the site's "
                                  "Python, not an image: --validate-on slurm needs docker or "
                                  "pyxis")])
    return ClusterValidation(host.slurm(), site)


def _locked_run(options: ReleaseOptions, prepared: Prepared, release_dir: Path,
                host: Host, cluster: ClusterValidation | None) -> ReleaseRecord | None:
    """The run, once this process holds the build dir; None when the host stopped it."""
    signing = signing_key() if options.push else None  # a bad key stops it before any write
    for image in prepared.rendered:
        image.write(release_dir / "context", owned=True)
    mode = host.gpu_mode()
    if _stopped_by_host(prepared, release_dir, mode, host.preflight):
        return None
    ui = Ui(release_dir / "logs", show_logs=options.show_logs)
    try:
        services = _services(options, prepared, host, ui, cluster, signing)
        return _run(options, prepared, services, mode)
    finally:
        ui.close()


def _services(options: ReleaseOptions, prepared: Prepared, host: Host, ui: Ui,
              cluster: ClusterValidation | None, signing: SigningKey | None) -> RunServices:
    """The site's build hosts when it lists engines, else the one engine (DOCKER_HOST)."""
    entries = load_site(options.site, prepared.loaded.root).engines
    if signing is not None and signing.made_now:
        ui.step("signing", f"no NGC_SIGNING_KEY: made a key pair in "
                f"{Path(signing.source).parent} (its public key goes beside the release notes)")
    if not entries:
        return RunServices(host.connect(), ui, cluster=cluster, signing=signing)
    hosts = open_site_hosts(entries, host.open_host)
    return RunServices(hosts[0].engine, ui, BuildHosts(hosts), cluster, signing)


def _stopped_by_host(prepared: Prepared, release_dir: Path, mode: str,
                     preflight: Preflight) -> bool:
    defects = host_defects(prepared.loaded, release_dir, mode, preflight)
    for check in defects:
        print(f"host defect: {check.id}: {check.message}", file=sys.stderr)
    if defects:
        print("T1 preflight failed: fix the host, or validate without GPUs (NGC_GPU=none); "
              "nothing was built or pushed", file=sys.stderr)
    return bool(defects)


def _inputs(prepared: Prepared, build_dir: Path, os_image_ids: dict[str, str],
            network: BuildNetwork) -> RunInputs:
    loaded, plan = prepared.loaded, prepared.plan
    rendered = prepared.rendered_by_name()
    release_dir = build_dir / plan.release
    return RunInputs(
        plan=plan, rendered=rendered, keys=release_keys(loaded, plan, rendered, prepared.lock),
        context_dir=release_dir / "context", report_dir=release_dir / "reports",
        os_image_ids=os_image_ids, revision=prepared.revision,
        source=project_source(loaded.root, loaded.release.source),
        baselines_file=loaded.root / baselines.DEFAULT_FILE, network=network, lock=prepared.lock,
        lock_errors={name: image.error for name, image in prepared.lock.images.items()
                     if image.error is not None}, manifest=loaded.manifest)


def _policy(options: ReleaseOptions, prepared: Prepared, mode: str) -> RunPolicy:
    return RunPolicy(push=options.push, gpu_mode=mode, jobs=options.jobs, force=options.force,
                     aliases=tuple(prepared.loaded.release.aliases),
                     reuse_published=options.reuse_published, no_cache=options.no_cache,
                     promote=options.promote)


def _state(options: ReleaseOptions, prepared: Prepared) -> RunState:
    path = record_path(options.build_dir, prepared.plan.release)
    record = open_record(path, prepared.plan, prepared.loaded.manifest)
    check_evidence(record, path.parent, path)  # a resumed record names only its own files
    return RunState(record, path)


def _run(options: ReleaseOptions, prepared: Prepared, services: RunServices,
         mode: str) -> ReleaseRecord:
    state = _state(options, prepared)
    try:
        return _run_images(options, prepared, services, mode, state)
    except Interrupted as reason:
        stop_run(state, services, reason)
        reason.workers_left = True
        raise


def _run_images(options: ReleaseOptions, prepared: Prepared, services: RunServices, mode: str,
                state: RunState) -> ReleaseRecord:
    """OS images first (their IDs are the base layers' parents), then every selected image."""
    hosts = services.build_hosts.hosts
    sweep_stale(hosts, services.ui)
    selected = prepared.plan.select(options.only)
    # The cache first: a locked OS base is built from its .debs there.
    network = ready_cache(services.engine, prepared.loaded, prepared.lock, selected,
                          options.offline, services.ui)
    cache = open_cache(default_root())
    # Every wheel of the selected images is in the cache now: their metadata is at hand.
    require_closure(prepared.loaded, prepared.plan, prepared.lock, selected, cache)
    locked = {name: locked_bootstrap(entry, cache.deb_path)
              for name, entry in prepared.lock.os.items()}
    state.record.os.update(obtain_os_images(services.engine, prepared.loaded, prepared.plan,
                                            selected, options.os_strategy, services.ui, locked))
    ready_other_hosts(hosts, prepared.loaded, prepared.plan, selected, options.os_strategy,
                      options.offline, services.ui, locked)
    os_ids = {name: os.image_id for name, os in state.record.os.items() if os.image_id}
    run = Run(_inputs(prepared, options.build_dir, os_ids, network),
              _policy(options, prepared, mode), services, state)
    run_images(run, selected)
    return state.record


def _summary(record: ReleaseRecord, selected: list[ImageRecord], as_json: bool) -> None:
    if as_json:
        print(json.dumps(record.model_dump(mode="json"), indent=2))
    else:
        print_summary(record, selected)
