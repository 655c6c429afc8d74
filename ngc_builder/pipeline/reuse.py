"""Work a run need not do again: an image the registry holds by its content key, an expected
failure already recorded for the same inputs, a local image built from the same key (by this
run's record, or by another run), a parent pulled back from the registry."""

from __future__ import annotations

import contextlib

import docker.errors
import requests

from ngc_builder.assemble import packages
from ngc_builder.assemble.imageconfig import KnownConfigs
from ngc_builder.errors import StepError
from ngc_builder.manifest.platforms import HOST_PLATFORM, others
from ngc_builder.pipeline.adopt import published_labels, published_validation
from ngc_builder.pipeline.run import Run
from ngc_builder.plan.dag import ImageSpec, optional_platform
from ngc_builder.publish.oci_index import platforms_of
from ngc_builder.records.record import (
    BuildRecord,
    ImageRecord,
    PlatformRecord,
    PushRecord,
    ValidationRecord,
)
from ngc_builder.services.engine import Engine, find_built
from ngc_builder.services.registry import RegistryError
from ngc_builder.services.retry import RetryPolicy
from ngc_builder.services.streams import StreamError, consume_pull


def published(run: Run, spec: ImageSpec, record: ImageRecord) -> str | None:
    """The digest under which the registry holds this image's key, the record marked as reused:
    nothing to build, validate or push. With GPUs, an image published after CPU-only
    validation is validated again (None)."""
    key = run.inputs.keys[spec.name]
    wanted = run.policy.push and run.policy.reuse_published
    digest = _published_digest(run, spec) if wanted else None
    held = None if digest is None else _published_platforms(run, spec, digest)
    if digest is None or held is None:
        return None
    same = record.build.key == key.key
    gpu_checked = same and record.validation.gpu_mode == "required"
    if run.policy.gpu_mode == "required" and not gpu_checked:
        return None
    if not same:
        _adopt(run, spec, record, digest)
    record.build.reused = record.validation.reused = True
    run.ui.step(spec.name, f"unchanged: registry holds {key.tag[:16]}... at {digest}")
    record.push = record.push.model_copy(update={
        "status": "ok", "digest": digest, "reused": True, "error": None,
        "host_digest": held.get(HOST_PLATFORM)})
    for platform, found in _others(held).items():
        entry = record.platforms.setdefault(platform, PlatformRecord())
        entry.digest, entry.left_out = found, None
    return digest


def staged_ancestor(run: Run, spec: ImageSpec, record: ImageRecord) -> str | None:
    """An image this run only builds on (`--only` names an image on it) whose candidate the
    registry holds staged by its key: its own job built, validated and pushed it, and a later
    gate promotes it. Taken as that job left it, not validated again here (each child's job
    would otherwise judge its parents again) and never promoted by this run; None otherwise."""
    targets = run.policy.targets
    if not targets or spec.name in targets or not (run.policy.push and run.policy.reuse_published):
        return None
    key = run.inputs.keys[spec.name]
    try:
        digest = run.registry.manifest_digest(spec.name, key.staged_tag)
    except RegistryError as exc:
        run.ui.step(spec.name, f"cannot ask the registry for its staged key ({exc})")
        return None
    held = None if digest is None else _published_platforms(run, spec, digest)
    if digest is None or held is None:
        return None
    record.labels = published_labels(run.registry, spec.name, digest)
    record.build = BuildRecord(status="ok", key=key.key, reused=True, source="registry",
                               inputs=key.inputs())
    record.validation = ValidationRecord(status="ok", reused=True, gpu_mode="(staged)")
    record.push = PushRecord(status="ok", digest=digest, reused=True, staged=key.staged_tag,
                             host_digest=held.get(HOST_PLATFORM))
    record.platforms = {platform: PlatformRecord(digest=found)
                        for platform, found in _others(held).items()}
    run.ui.step(spec.name, f"built on: the registry holds it staged at {digest} (its own job "
                           "validated it; not promoted here)")
    return digest


def _published_platforms(run: Run, spec: ImageSpec, digest: str) -> dict[str, str] | None:
    """platform -> manifest of each platform of the image the published index holds (the
    host's too; {} for a one-platform image); None when it lacks one the image must ship
    (then it is built again, all of it)."""
    if not others(spec.platforms):
        return {}
    try:
        held = platforms_of(run.registry, spec.name, digest)
    except RegistryError as exc:
        run.ui.step(spec.name, f"cannot read the published index ({exc})")
        return None
    required = [p for p in others(spec.platforms)
                if not optional_platform(run.inputs.plan, spec, p)]
    missing = [platform for platform in required if platform not in held]
    if missing:
        run.ui.step(spec.name, f"the registry's {digest[:19]} lacks {', '.join(missing)}")
        return None
    return {platform: found for platform, found in held.items() if platform in spec.platforms}


def _others(held: dict[str, str]) -> dict[str, str]:
    return {platform: found for platform, found in held.items() if platform != HOST_PLATFORM}

def _adopt(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> None:
    """The record of an image another run published: its labels and attested validation
    from the registry, its size from a local copy when this host has one."""
    key = run.inputs.keys[spec.name]
    local = find_built(run.engine, key.key)
    record.build = BuildRecord(
        status="ok", key=key.key, reused=True, source="registry", inputs=key.inputs(),
        image_id=None if local is None else str(local["Id"]),
        size_bytes=None if local is None else int(local.get("Size") or 0) or None)
    record.labels = published_labels(run.registry, spec.name, digest)
    if local is not None:  # same key, same locked packages: listed from the local copy
        with contextlib.suppress(StepError):
            record.build.packages = str(packages.collect(
                run.engine, str(local["Id"]),
                run.inputs.report_dir / f"{spec.name}.packages.json"))
    signing = run.services.signing
    record.validation = published_validation(
        run.registry, spec.name, digest, None if signing is None else signing.private.public_key())


def _published_digest(run: Run, spec: ImageSpec) -> str | None:
    try:
        return run.registry.manifest_digest(spec.name, run.inputs.keys[spec.name].tag)
    except RegistryError as exc:
        run.ui.step(spec.name, f"cannot ask the registry for its content key ({exc})")
        return None

def known_failure(run: Run, spec: ImageSpec, record: ImageRecord) -> bool:
    """An expected failure whose evidence this record already holds for the same inputs is
    not attempted again until an input changes (each release attempts it once)."""
    if record.outcome != "xfail" or record.build.key != run.inputs.keys[spec.name].key:
        return False
    run.ui.step(spec.name, "expected failure already recorded for these inputs")
    return True

def adopt_local(run: Run, spec: ImageSpec, record: ImageRecord) -> bool:
    """Take over an image built from the same key by another run (another build dir, the CI
    release): no build, the same image ID."""
    key = run.inputs.keys[spec.name]
    found = find_built(run.engine, key.key)
    if found is None:
        return False
    labels = dict(found.get("Labels") or {})
    run.ui.step(spec.name, f"unchanged (key {key.key[:12]}), reusing {found['Id']} built earlier")
    # When an adopted image was built is not known here (`build.created` stays None): its
    # `created` label is the lock's epoch, as its config's time is (assemble/imageconfig.py).
    record.labels = labels
    record.build = BuildRecord(status="ok", key=key.key, image_id=str(found["Id"]),
                               created=None,
                               size_bytes=int(found.get("Size") or 0), reused=True,
                               source="local", inputs=key.inputs(),
                               log=str(run.ui.log_path(spec.name)))
    record.validation = ValidationRecord()
    record.push = PushRecord()
    return True

def adopt_pushed(run: Run, spec: ImageSpec, record: ImageRecord) -> bool:
    """Take over the candidate the registry holds by this key (staged by `--no-promote`, or
    published and now to be validated with GPUs) on a host that has no copy: pulled by digest,
    gated again here; its push is already done."""
    found = _pushed_by_key(run, spec)
    held = None if found is None else _published_platforms(run, spec, found[1])
    if found is None or held is None or set(others(spec.platforms)) - set(held):
        return False  # an index without each platform: built anew, every platform
    tag, digest = found
    run.ui.step(spec.name, f"the registry holds {tag[:20]}... at {digest}: pulling it "
                           "rather than building it")
    engine = run.engine
    image_id = pull(run, spec, held.get(HOST_PLATFORM, digest))
    inspection = engine.api.inspect_image(image_id)
    labels = dict(inspection["Config"].get("Labels") or {})
    key = run.inputs.keys[spec.name]
    record.labels = labels
    record.build = BuildRecord(status="ok", key=key.key, image_id=image_id, reused=True,
                               created=None,
                               size_bytes=int(inspection.get("Size") or 0), source="registry",
                               inputs=key.inputs(), log=str(run.ui.log_path(spec.name)))
    record.validation = ValidationRecord()
    record.push = PushRecord(digest=digest, image_id=image_id, reused=True,
                             host_digest=held.get(HOST_PLATFORM))
    record.platforms = {platform: _pulled_platform(run, spec, platform, found)
                        for platform, found in _others(held).items()}
    return True


def _pulled_platform(run: Run, spec: ImageSpec, platform: str, digest: str) -> PlatformRecord:
    """Another platform of an adopted candidate, pulled by its index entry: the image this run
    validates (pipeline/platforms.py finds it built) is the one the index promotes."""
    engine, key = run.engine, run.inputs.keys[spec.name].key
    local_ref = run.inputs.platforms[platform].renders[spec.name].local_ref
    image_id = pull(run, spec, digest, local_ref, platform)
    labels = dict(engine.api.inspect_image(image_id)["Config"].get("Labels") or {})
    return PlatformRecord(digest=digest, labels=labels, build=BuildRecord(
        status="ok", key=key, image_id=image_id, reused=True, source="registry",
        created=None,
        log=str(run.ui.log_path(spec.name))))

def _pushed_by_key(run: Run, spec: ImageSpec) -> tuple[str, str] | None:
    if not (run.policy.push and run.policy.reuse_published):
        return None
    key = run.inputs.keys[spec.name]
    for tag in (key.tag, key.staged_tag):
        try:
            digest = run.registry.manifest_digest(spec.name, tag)
        except RegistryError:
            return None
        if digest is not None:
            return tag, digest
    return None

def parent_image(run: Run, spec: ImageSpec) -> str | None:
    """The local image `spec` is built FROM: its OS image, or its parent's once that passed
    (pulled back when the run skipped it); None: the parent did not pass."""
    if spec.parent is None:
        return run.inputs.os_image_ids.get(spec.base)
    parent = run.state.record.images.get(spec.parent)
    # A failed push of the parent does not block children: they still build and validate,
    # and their own push fails (loudly) while the registry is down.
    if parent is None or parent.build.status != "ok" or parent.validation.status != "ok":
        return None
    with run.state.image_lock(spec.parent):  # two children must not pull it back twice
        return ensure_local(run, run.inputs.plan.get(spec.parent), parent)


def ensure_local(run: Run, spec: ImageSpec, record: ImageRecord) -> str | None:
    """An image for this record's key on the run's engine: the recorded one, one built
    earlier from the key, else the published one pulled by digest (and tagged as the ref
    children are built FROM)."""
    engine = run.engine
    image_id = record.build.image_id
    if image_id is not None and exists(engine, image_id):
        return image_id
    found = find_built(engine, record.build.key or "")
    if found is not None:
        record.build.image_id = str(found["Id"])
        return record.build.image_id
    if record.push.digest is None:
        return None
    record.build.image_id = pull(run, spec, record.push.digest)
    return record.build.image_id

def pull(run: Run, spec: ImageSpec, digest: str, local_ref: str | None = None,
         platform: str | None = None) -> str:
    """The published image pulled by digest onto the run's engine, tagged as its candidate ref (or
    `local_ref`: another platform's, pulled as `platform`)."""
    engine = run.engine
    reference = f"{spec.remote_repository(run.registry)}@{digest}"
    run.ui.step(spec.name, f"pulling {reference}")
    options = {"platform": platform} if platform else {}
    try:
        sink = run.ui.sink(spec.name)
        RetryPolicy.from_env(say=sink).call(f"pull {reference}", lambda: consume_pull(
            engine.api.pull(reference, stream=True, decode=True, **options), sink))
        local = local_ref or run.inputs.rendered[spec.name].local_ref
        repository, _, tag = local.rpartition(":")
        engine.api.tag(reference, repository, tag)
        image_id = str(engine.api.inspect_image(reference)["Id"])
    except (StreamError, docker.errors.DockerException, requests.RequestException) as exc:
        raise StepError(spec.name, "pull", f"{reference}: {exc}") from None
    _keep_config(run, spec, image_id)
    return image_id


def _keep_config(run: Run, spec: ImageSpec, image_id: str) -> None:
    """The pulled image's config as the registry holds it (its digest is the image ID): an
    image built FROM it reads there which of its steps wrote a layer (imageconfig.py)."""
    with contextlib.suppress(RegistryError, OSError):
        KnownConfigs.default().keep(run.registry.get_blob(spec.name, image_id))

def exists(engine: Engine, image_id: str) -> bool:
    try:
        engine.api.inspect_image(image_id)
    except (docker.errors.DockerException, requests.RequestException):
        return False
    return True

def held(run: Run, spec: ImageSpec, digest: str) -> bool:
    try:
        return run.registry.manifest_digest(spec.name, digest) == digest
    except RegistryError:
        return False
