"""A release, top to bottom: from the prepared release (manifest checked, planned, rendered,
locked) to the record of every selected image built, validated, pushed and promoted.

    release_flow
      the cluster that validates (--validate-on slurm) or builds (--on slurm), checked
        before anything is written
      the build dir, held by this process
        the signing key, read before anything is written
        the rendered contexts written
        the T1 gate (with GPUs to validate on)
        the services: the engine, UI, cluster, signing
        the record, reopened where an earlier run stopped
          the package cache filled and served; the lock's content checked against it
          the OS images
          every selected image through its lifecycle (`lifecycle.process_image`)
          or (--on slurm) as a job of the cluster, then promoted here (`on_slurm`)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ngc_builder.assemble.image import project_source
from ngc_builder.assemble.osbase import locked_bootstrap
from ngc_builder.cache.network import BuildNetwork
from ngc_builder.cache.store import PackageCache, default_root, open_cache
from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.site import site_path, slurm_site
from ngc_builder.pipeline import tidy
from ngc_builder.pipeline.cache import ready_cache
from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.images import (
    Preflight,
    host_defects,
    obtain_os_images,
    open_record,
    run_images,
)
from ngc_builder.pipeline.interrupt import Interrupted, stop_run
from ngc_builder.pipeline.on_slurm import SlurmRelease, release_on_slurm, slurm_release
from ngc_builder.pipeline.options import ReleaseOptions as ReleaseOptions
from ngc_builder.pipeline.prepare import Prepared, require_closure
from ngc_builder.pipeline.run import (
    ClusterValidation,
    PlatformInputs,
    Run,
    RunInputs,
    RunServices,
    RunState,
)
from ngc_builder.pipeline.squashfs import check_squashfs_tools
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.publish.cosign_keys import SigningKey, signing_key
from ngc_builder.records.claim import claim_release_dir
from ngc_builder.records.evidence import check_evidence
from ngc_builder.records.record import ReleaseRecord, record_path
from ngc_builder.render.content_keys import ImageKey, content_keys
from ngc_builder.render.platforms import platform_os_refs
from ngc_builder.services.engine import (
    DockerEngine,
    Engine,
    connect,
    gpu_mode,
    remove_stale_containers,
)
from ngc_builder.services.registry import Registry, RegistryError
from ngc_builder.services.slurm import SlurmCluster, SubprocessSlurm
from ngc_builder.validate import baselines
from ngc_builder.validate.preflight import host_preflight


@dataclass(frozen=True)
class Host:
    """What a release finds on the machine it runs on; tests hand in their own."""

    connect: Callable[[], Engine] = connect
    # Not asked to answer: the submit side of --on slurm (a login node, often without Docker)
    # builds nothing; only a registry that refuses the API's tagging falls back to an engine.
    unchecked: Callable[[], Engine] = DockerEngine
    gpu_mode: Callable[[], str] = gpu_mode
    preflight: Preflight = host_preflight
    slurm: Callable[[], SlurmCluster] = SubprocessSlurm  # the site's cluster


def release_flow(options: ReleaseOptions, prepared: Prepared,
                 host: Host) -> ReleaseRecord | None:
    """The record of the run; None when the host stopped it before anything was built."""
    cluster = _cluster(options, prepared, host)
    on_slurm = slurm_release(options, prepared, host.slurm) if options.on == "slurm" else None
    release_dir = options.build_dir / prepared.plan.release
    with claim_release_dir(release_dir, lambda text: print(f"note: {text}", file=sys.stderr)):
        signing = _signing() if options.policy.push else None  # bad: stop before writing
        if options.policy.push and on_slurm is None:  # on Slurm the image jobs make them
            check_squashfs_tools(prepared.plan.select(options.only), prepared.loaded.manifest,
                                 list(prepared.loaded.release.images))
        for image in prepared.rendered:
            image.write(release_dir / "context", owned=True)
        # The nodes validate (and pass their own T1 gate) on Slurm, not this host.
        mode = host.gpu_mode() if on_slurm is None else "none"
        if _stopped_by_host(prepared, release_dir, mode, host.preflight):
            return None
        ui = Ui(release_dir / "logs", show_logs=options.show_logs)
        try:
            engine = host.connect() if on_slurm is None else host.unchecked()
            services = RunServices(engine, ui, cluster=cluster, signing=signing)
            return _run(options, prepared, services, mode, on_slurm)
        finally:
            ui.close()


def _signing() -> SigningKey:
    """The release's signing key (docs/signing.md); a key pair made now is said at once,
    whatever stops the run after it."""
    key = signing_key()
    if key.made_now:
        print(f"note: no NGC_SIGNING_KEY: made a key pair in {Path(key.source).parent} (its "
              "public key goes beside the release notes)", file=sys.stderr)
    return key


def _cluster(options: ReleaseOptions, prepared: Prepared,
             host: Host) -> ClusterValidation | None:
    """--validate-on slurm: the site's cluster, refused up front where it cannot judge the
    release's images (no push for the node to pull, runtime host validates no image)."""
    if options.validate_on != "slurm":
        return None
    site = slurm_site(options.site, prepared.loaded.root)
    if not options.policy.push:  # the CLI refuses it too; here for other callers
        raise InputError([Problem("release", 0, "--validate-on slurm", "needs the push: the "
                                  "node pulls the candidate it validates")])
    if site.runtime == "host":
        where = str(site_path(options.site, prepared.loaded.root))
        raise InputError([Problem(where, 1, "slurm.runtime", "host validates the site's "
                                  "Python, not an image: --validate-on slurm needs docker or "
                                  "pyxis")])
    return ClusterValidation(host.slurm(), site)


def _stopped_by_host(prepared: Prepared, release_dir: Path, mode: str,
                     preflight: Preflight) -> bool:
    defects = host_defects(prepared.loaded, release_dir, mode, preflight)
    for check in defects:
        print(f"host defect: {check.id}: {check.message}", file=sys.stderr)
    if defects:
        print("T1 preflight failed: fix the host, or validate without GPUs (NGC_GPU=none); "
              "nothing was built or pushed", file=sys.stderr)
    return bool(defects)


def _run(options: ReleaseOptions, prepared: Prepared, services: RunServices,
         mode: str, on_slurm: SlurmRelease | None) -> ReleaseRecord:
    path = record_path(options.build_dir, prepared.plan.release)
    state = RunState(open_record(path, prepared.plan, prepared.loaded.manifest), path)
    check_evidence(state.record, path.parent, path)  # a resumed record names only its files
    try:
        if on_slurm is not None:
            return _run_on_slurm(options, prepared, services, state, on_slurm)
        return _run_images(options, prepared, services, mode, state)
    except Interrupted as reason:
        stop_run(state, services, reason)
        reason.workers_left = True
        raise


def _run_images(options: ReleaseOptions, prepared: Prepared, services: RunServices, mode: str,
                state: RunState) -> ReleaseRecord:
    """OS images first (their IDs are the base layers' parents), then every selected image."""
    swept = remove_stale_containers(services.engine)
    if swept:
        services.ui.step("release", f"removed {swept} container(s) left by an earlier run "
                                    "that was killed")
    selected = prepared.plan.select(options.only)
    inputs = run_inputs(prepared, options.build_dir, {}, None)
    built = may_build(prepared.plan.registry, selected, options.only, inputs.keys)
    cache = open_cache(default_root())
    locked = {name: locked_bootstrap(entry, cache.deb_path)
              for name, entry in prepared.lock.os.items()}

    def os_images() -> dict[str, PlatformInputs]:
        """Made from their .debs while the wheels download (`ready_cache`)."""
        with state.span("release", "os images"):
            state.record.os.update(obtain_os_images(services.engine, prepared.loaded,
                                                    prepared.plan, built,
                                                    options.os_strategy, services.ui, locked))
        with state.span("release", "other platforms' OS images"):
            return ready_platforms(services.engine, prepared, built, cache, services.ui)

    with state.span("packages", "cache"):
        network, platforms = ready_cache(services.engine, prepared.loaded, prepared.lock,
                                         selected, options.offline, services.ui, os_images)
        # Every package of the selected images is in the cache now: their metadata is at hand.
        require_closure(prepared.loaded, prepared.plan, prepared.lock, selected, cache)
    os_ids = {name: os.image_id for name, os in state.record.os.items() if os.image_id}
    policy = replace(options.policy, gpu_mode=mode, targets=frozenset(options.only),
                     aliases=tuple(prepared.loaded.release.aliases))
    inputs = replace(inputs, os_image_ids=os_ids, network=network, platforms=platforms)
    run = Run(inputs, policy, services, state)
    run_images(run, selected)
    services.ui.step("release", tidy.left_behind(run, selected, cache.root))
    return state.record


def may_build(registry: Registry, selected: list[ImageSpec], only: list[str],
              keys: dict[str, ImageKey]) -> list[ImageSpec]:
    """The selected images this run may build, whose OS images it makes: with --only (a Slurm
    or CI job), not an image it only builds on that the registry holds by its key or staged
    by its own job (it is pulled: a child's job need not make its parents' OS)."""
    def held(spec: ImageSpec) -> bool:
        key = keys[spec.name]
        try:
            return any(registry.manifest_digest(spec.name, tag) is not None
                       for tag in (key.tag, key.staged_tag))
        except RegistryError:
            return False
    return [spec for spec in selected if not only or spec.name in only or not held(spec)]


def _run_on_slurm(options: ReleaseOptions, prepared: Prepared, services: RunServices,
                  state: RunState, on_slurm: SlurmRelease) -> ReleaseRecord:
    """Every selected image a job of the cluster; this side only promotes what they staged:
    no OS image, package cache or build here."""
    policy = replace(options.policy, targets=frozenset(options.only),
                     aliases=tuple(prepared.loaded.release.aliases))
    run = Run(run_inputs(prepared, options.build_dir, {}, None), policy, services, state)
    release_on_slurm(run, prepared.plan.select(options.only), on_slurm)
    return state.record


def ready_platforms(engine: Engine, prepared: Prepared, selected: list[ImageSpec],
                    cache: PackageCache, ui: Ui) -> dict[str, PlatformInputs]:
    """Each other platform the selected images ship: its renders, lock and OS images (made
    from its lock once, like the host's; a failure leaves the base layer to fail its build)."""
    found = {}
    for platform, renders in prepared.platform_renders().items():
        closure = prepared.lock.of_platform(platform)
        refs = platform_os_refs(prepared.loaded, prepared.plan, prepared.lock, platform)
        wanted = [spec for spec in selected if platform in spec.platforms]
        locked = {name: locked_bootstrap(entry, cache.deb_path)
                  for name, entry in closure.os.items()}
        made = obtain_os_images(engine, prepared.loaded, replace(prepared.plan, os_refs=refs),
                                wanted, "bootstrap", ui, locked)
        found[platform] = PlatformInputs(
            renders=renders, lock=closure, wheel_path=cache.wheel_path,
            os_images={name: os.ref for name, os in made.items() if os.image_id},
            pythons={name: base.python for name, base in prepared.loaded.bases.items()})
    return found


def run_inputs(prepared: Prepared, build_dir: Path, os_image_ids: dict[str, str],
               network: BuildNetwork | None) -> RunInputs:
    """What the run builds: the plan, its contexts, keys and lock, where reports go."""
    loaded, plan = prepared.loaded, prepared.plan
    rendered = prepared.rendered_by_name()
    release_dir = build_dir / plan.release
    return RunInputs(
        plan=plan, rendered=rendered, keys=content_keys(loaded, plan, rendered, prepared.lock,
                                                 prepared.platform_renders()),
        context_dir=release_dir / "context", report_dir=release_dir / "reports",
        os_image_ids=os_image_ids, revision=prepared.revision,
        source=project_source(loaded.root, loaded.release.source),
        baselines_file=loaded.root / baselines.DEFAULT_FILE, network=network, lock=prepared.lock,
        lock_errors={name: image.error for name, image in prepared.lock.images.items()
                     if image.error is not None}, manifest=loaded.manifest)
