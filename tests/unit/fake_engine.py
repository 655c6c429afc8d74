"""A fake Docker engine and registry for pipeline unit tests: it keeps images, tags and
pushed digests in memory and records every call, so tests can prove what was (not) done."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import docker.errors
import requests

from ngc_builder.assemble.packages import DPKG_LIST, PIP_LIST
from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.images import run_images
from ngc_builder.pipeline.run import (
    ClusterValidation,
    Run,
    RunInputs,
    RunPolicy,
    RunServices,
    RunState,
)
from ngc_builder.plan.dag import ReleasePlan
from ngc_builder.records.record import ImageRecord, ReleaseRecord
from ngc_builder.render.content_keys import ImageKey
from ngc_builder.render.contexts import RenderedImage
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.engine import Engine
from ngc_builder.services.registry import Manifest, Registry, RegistryError
from ngc_builder.validate.image import ENTRY_PROBE, ENTRY_STATUS, ENTRY_STDOUT

Chunk = Mapping[str, Any]
OS_ID = "sha256:" + "05" * 32
REGISTRY = "localhost:5000"
TAG = "26.11-py3"
ALL = ["base", "cuda-cu13", "pytorch", "jax"]


def sha_of(text: str) -> str:
    return sha_of_bytes(text.encode())


def sha_of_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _member(tar: tarfile.TarFile, name: str) -> bytes:
    extracted = tar.extractfile(name)
    assert extracted is not None
    return extracted.read()


@dataclass
class FakeEngine:
    """Images, tags and a registry in memory; failures chosen per image name."""

    fail_build: set[str] = field(default_factory=set)
    fail_validation: set[str] = field(default_factory=set)
    fail_push: set[str] = field(default_factory=set)
    flaky_push: dict[str, int] = field(default_factory=dict)  # image -> pushes that fail first
    hang_validation: set[str] = field(default_factory=set)
    drop_label: dict[str, str] = field(default_factory=dict)
    images: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> name, labels
    tags: dict[str, str] = field(default_factory=dict)  # ref -> id
    registry: dict[tuple[str, str], str] = field(default_factory=dict)  # (name, tag) -> digest
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    builds: int = 0
    registry_down: bool = False
    foreign_candidates: bool = False  # staging tags answer with another client's digest
    fail_promote: set[str] = field(default_factory=set)
    # image -> another image whose build its push waits for (at most 5 s): proves overlap
    hold_push: dict[str, str] = field(default_factory=dict)
    built_events: dict[str, threading.Event] = field(default_factory=dict)
    networks: dict[str, str] = field(default_factory=lambda: {"bridge": "172.17.0.1"})
    exports: dict[str, bytes] = field(default_factory=dict)  # image id -> its `docker export`

    def built_event(self, name: str) -> threading.Event:
        return self.built_events.setdefault(name, threading.Event())
    pushed_images: dict[str, dict[str, Any]] = field(default_factory=dict)  # digest -> image

    def calls_of(self, kind: str) -> list[tuple[Any, ...]]:
        return [call for call in self.calls if call[0] == kind]

    def built(self) -> list[str]:
        return [call[1] for call in self.calls_of("build")]

    def touched_remote(self, name: str) -> list[tuple[Any, ...]]:
        """Every tag or push call that names `name` in the registry."""
        repository = f"{REGISTRY}/{name}"
        return [call for call in self.calls
                if (call[0] == "tag" and call[2] == repository)
                or (call[0] == "push" and call[1] == repository)
                or (call[0] == "put_manifest" and call[1] == name)]


class FakeRegistry:
    """The `Registry` service over the engine's in-memory registry (name, tag) -> digest."""

    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.blobs: dict[tuple[str, str], bytes] = {}  # (name, digest) -> bytes

    @property
    def address(self) -> str:
        return REGISTRY

    def _held(self, name: str, reference: str) -> str | None:
        if reference.startswith("sha256:"):
            held = {d for (n, _), d in self.engine.registry.items() if n == name}
            return reference if reference in held else None
        return self.engine.registry.get((name, reference))

    def manifest_digest(self, name: str, reference: str) -> str | None:
        if self.engine.registry_down:
            raise RegistryError(f"http://{REGISTRY}/v2/: connection refused")
        if self.engine.foreign_candidates and "-rc" in reference:
            return sha_of("someone else's")  # another client moved the staging tag under us
        return self._held(name, reference)

    def list_tags(self, name: str) -> list[str]:
        return sorted(tag for (n, tag) in self.engine.registry if n == name)

    def get_manifest(self, name: str, reference: str) -> Manifest | None:
        digest = self._held(name, reference)
        return None if digest is None else Manifest(digest.encode(), "application/json", digest)

    def put_manifest(self, name: str, tag: str, manifest: Manifest) -> str:
        self.engine.calls.append(("put_manifest", name, tag, manifest.digest))
        if name in self.engine.fail_promote:
            raise RegistryError(f"http://{REGISTRY}/v2/{name}/manifests/{tag}: connection reset")
        self.engine.registry[(name, tag)] = manifest.digest
        return manifest.digest

    def put_blob(self, name: str, data: bytes) -> str:
        return _put_blob(self.blobs, name, data)

    def get_blob(self, name: str, digest: str) -> bytes:
        return _get_blob(self.blobs, REGISTRY, name, digest)


def _put_blob(blobs: dict[tuple[str, str], bytes], name: str, data: bytes) -> str:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    blobs[(name, digest)] = data
    return digest


def _get_blob(blobs: dict[tuple[str, str], bytes], address: str, name: str,
              digest: str) -> bytes:
    if (name, digest) not in blobs:  # a blob of another repository is not readable here
        raise RegistryError(f"https://{address}/v2/{name}/blobs/{digest}: HTTP 404")
    return blobs[(name, digest)]


class FakeApi:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.internal = True  # networks other than the default bridge have no route out

    def build(self, *, path: str, tag: str, labels: dict[str, str], rm: bool, forcerm: bool,
              pull: bool, decode: bool, nocache: bool, network_mode: str | None = None,
              extra_hosts: dict[str, str] | None = None,
              platform: str | None = None) -> Iterator[Chunk]:
        engine = self.engine
        name = Path(path).name
        kwargs = {"rm": rm, "forcerm": forcerm, "pull": pull, "nocache": nocache,
                  "network_mode": network_mode, "extra_hosts": extra_hosts,
                  **({"platform": platform} if platform else {})}
        engine.calls.append(("build", name, tag, kwargs))
        engine.built_event(name).set()
        yield {"stream": f"Step 1/2 : FROM parent-of-{name}\n"}
        if name in engine.fail_build:
            yield {"stream": "Step 2/2 : RUN pip install ...\n"}
            yield {"errorDetail": {"code": 1, "message": f"{name}: pip install returned 1"},
                   "error": f"{name}: pip install returned 1"}
            yield {"stream": "after the error\n"}
            return
        engine.builds += 1
        image_id = sha_of(f"{tag}|{engine.builds}")
        kept = {k: v for k, v in labels.items() if k != engine.drop_label.get(name)}
        engine.images[image_id] = {"name": name, "labels": kept, "built": True}
        engine.tags[tag] = image_id
        yield {"aux": {"ID": image_id}}
        yield {"stream": f"Successfully built {image_id[7:19]}\n"}

    def _resolve(self, ref: str) -> str:
        image_id = ref if ref in self.engine.images else self.engine.tags.get(ref)
        if image_id is None or image_id not in self.engine.images:
            raise docker.errors.ImageNotFound(f"No such image: {ref}")
        return image_id

    def inspect_network(self, net_id: str) -> dict[str, Any]:
        if net_id not in self.engine.networks:
            raise docker.errors.NotFound(f"network {net_id} not found")
        gateway = self.engine.networks[net_id]
        return {"Name": net_id, "Internal": self.internal and net_id != "bridge",
                "IPAM": {"Config": [{"Gateway": gateway}]}}

    def create_network(self, name: str, *, driver: str, internal: bool,
                       check_duplicate: bool) -> dict[str, str]:
        self.engine.calls.append(("network", name, driver, internal))
        self.engine.networks[name] = f"172.{17 + len(self.engine.networks)}.0.1"
        return {"Id": name}

    def images(self, *, filters: dict[str, str]) -> list[dict[str, Any]]:
        key, _, value = filters["label"].partition("=")
        # A build's own image keeps its parent chain; one whose config was written again
        # (load_image) has none, as in a real engine.
        return [{"Id": image_id, "Size": 1_000_000, "Labels": dict(image["labels"]),
                 "ParentId": sha_of(f"parent of {image_id}") if image.get("built") else "",
                 "RepoTags": [tag for tag, tagged in self.engine.tags.items()
                              if tagged == image_id] or ["<none>:<none>"]}
                for image_id, image in self.engine.images.items()
                if image["labels"].get(key) == value]

    def history(self, image: str) -> list[dict[str, Any]]:
        """As the classic builder writes it: one LABEL entry per label, above the build's
        own steps (an image marked `derived` has a step of its own on top)."""
        found = self.engine.images[self._resolve(image)]
        top = [{"CreatedBy": "/bin/sh -c rm -f libstdc++.so.6", "Size": 5}] * \
            bool(found.get("derived"))
        labels = [{"CreatedBy": f"/bin/sh -c #(nop)  LABEL {key}={value}", "Size": 0}
                  for key, value in found["labels"].items()]
        return top + labels + [{"CreatedBy": "/bin/sh -c pip install", "Size": 1000}]

    def inspect_image(self, image: str) -> dict[str, Any]:
        image_id = self._resolve(image)
        found = self.engine.images[image_id]
        layers = [sha_of(f"layer {found['name']}")] + [sha_of("rm")] * bool(found.get("derived"))
        return {"Id": image_id, "Size": 1_000_000,
                "Config": {"Labels": dict(found["labels"]), "Env": list(found.get("env", []))},
                "Architecture": "amd64", "Os": "linux", "Parent": "",
                "RootFS": {"Type": "layers", "Layers": layers},
                "RepoDigests": list(found.get("repo_digests", [])),
                "RepoTags": sorted(tag for tag, tagged in self.engine.tags.items()
                                   if tagged == image_id)}

    def inspect_distribution(self, image: str) -> dict[str, Any]:
        repository, _, tag = image.rpartition(":")
        digest = self.engine.registry[(repository.rsplit("/", 1)[-1], tag)]
        return {"Descriptor": {"digest": digest}}

    def tag(self, image: str, repository: str, tag: str) -> bool:
        self.engine.calls.append(("tag", image, repository, tag))
        self.engine.tags[f"{repository}:{tag}"] = self._resolve(image)
        return True

    def push(self, repository: str, *, tag: str, stream: bool, decode: bool,
             ) -> Iterator[Chunk]:
        engine = self.engine
        name = repository.rsplit("/", 1)[-1]
        if name in engine.hold_push:
            engine.built_event(engine.hold_push[name]).wait(timeout=5)
        engine.calls.append(("push", repository, tag))
        yield {"status": f"The push refers to repository [{repository}]"}
        if engine.flaky_push.get(name, 0) > 0:
            engine.flaky_push[name] -= 1
            message = "received unexpected HTTP status: 503 Service Unavailable"
            yield {"errorDetail": {"message": message}, "error": message}
            return
        if name in engine.fail_push:
            message = (f"Get \"http://{REGISTRY}/v2/\": dial tcp 127.0.0.1:5000: "
                       "connect: connection refused")
            yield {"errorDetail": {"message": message}, "error": message}
            return
        image_id = engine.tags[f"{repository}:{tag}"]
        digest = sha_of(f"manifest of {image_id}")
        engine.registry[(name, tag)] = digest
        engine.images[image_id].setdefault("repo_digests", []).append(f"{repository}@{digest}")
        engine.pushed_images[digest] = dict(engine.images[image_id])
        yield {"status": f"{tag}: digest: {digest} size: 1234"}
        yield {"progressDetail": {}, "aux": {"Tag": tag, "Digest": digest, "Size": 1234}}

    def pull(self, repository: str, *, stream: bool, decode: bool, tag: str | None = None,
             ) -> Iterator[Chunk]:
        """Only `repository@digest` of something pushed before: the image comes back (with
        a new ID, as a pull of a pushed image has one in a real engine too)."""
        reference = repository if tag is None else f"{repository}:{tag}"
        self.engine.calls.append(("pull", reference))
        digest = reference.partition("@")[2]
        image_id = sha_of(f"pulled {digest}")
        self.engine.images[image_id] = dict(self.engine.pushed_images[digest])
        self.engine.tags[reference] = image_id
        yield {"status": f"Digest: {digest}"}
        yield {"status": f"Status: Downloaded newer image for {reference}"}

    def remove_image(self, image: str, noprune: bool = False) -> None:
        self.engine.calls.append(("remove_image", image, noprune))
        if image in self.engine.images and image not in self.engine.tags.values():
            del self.engine.images[image]  # an untagged image, by its ID
            return
        if image not in self.engine.tags:
            raise docker.errors.ImageNotFound(f"No such image: {image}")
        image_id = self.engine.tags.pop(image)
        held = self.engine.images.get(image_id, {}).get("repo_digests")
        if image_id not in self.engine.tags.values() and not held:
            self.engine.images.pop(image_id, None)  # its last reference: the image goes too

    def load_image(self, data: IO[bytes]) -> Iterator[Chunk]:
        """An image whose config was written again (assemble/imageconfig.py): the image
        tagged so far, under the ID of its new config."""
        self.engine.calls.append(("load",))
        with tarfile.open(fileobj=io.BytesIO(data.read())) as tar:
            manifest = json.loads(_member(tar, "manifest.json"))[0]
            config = _member(tar, manifest["Config"])
        ref = manifest["RepoTags"][0]
        image_id = sha_of_bytes(config)
        if ref in self.engine.tags and image_id not in self.engine.images:
            before = self.engine.images[self.engine.tags[ref]]
            self.engine.images[image_id] = {
                **{k: v for k, v in before.items() if k not in ("repo_digests", "built")},
                "labels": dict(json.loads(config)["config"].get("Labels") or {})}
        self.engine.tags[ref] = image_id
        yield {"stream": f"Loaded image: {ref}"}

    def containers(self, *, all: bool, filters: dict[str, str]) -> list[dict[str, Any]]:
        """The fake's containers are removed as soon as they are done: none is left over."""
        return []

    def remove_container(self, container: str, *, force: bool) -> None:
        raise AssertionError(f"no container {container} to remove")

    def get_image(self, image: str) -> Iterator[bytes]:
        # The pipeline's fakes push through the engine (FakeRegistry speaks no HTTP); the
        # registry-API push has its own tests (tests/unit/publish/test_upload.py).
        raise AssertionError(f"export of {image} not expected from a fake pipeline run")

    def import_image_from_file(self, filename: str, *, repository: str, tag: str,
                               changes: list[str]) -> None:
        image_id = sha_of(f"import {filename}")
        self.engine.calls.append(("import", filename, f"{repository}:{tag}"))
        self.engine.images[image_id] = {"name": repository, "labels": {}}
        self.engine.tags[f"{repository}:{tag}"] = image_id


class FakeContainer:
    def __init__(self, report: RunReport | None, hangs: bool = False, output: str = "",
                 status: int = 0, errors: str = "") -> None:
        self.output = output
        self.status = status
        self.errors = errors
        self.report = report
        self.hangs = hangs
        self.removed = False
        self.exported = b""  # what `docker export` streams: a tar of its root filesystem

    def start(self) -> None:
        pass

    def export(self, chunk_size: int) -> Iterator[bytes]:
        for start in range(0, len(self.exported), chunk_size):
            yield self.exported[start:start + chunk_size]

    def wait(self, timeout: int | None = None) -> dict[str, int]:
        if self.hangs:  # what docker-py raises when the runner outlives `timeout`
            raise requests.exceptions.ReadTimeout("Read timed out. (read timeout=1800)")
        if self.report is None:
            return {"StatusCode": self.status}
        return {"StatusCode": 0 if self.report.verdict == "pass" else 1}

    def logs(self, stdout: bool = True, stderr: bool = True) -> bytes:
        if self.report is None:
            return (self.output if stdout else self.errors).encode()
        if stdout and not stderr:
            return json.dumps(self.report.to_dict()).encode()
        return b"runner: done\n"

    def remove(self, force: bool = False) -> None:
        self.removed = True


class FakeContainers:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.created: list[FakeContainer] = []

    def create(self, image: str, command: list[str], *, network_disabled: bool,
               entrypoint: list[str] | None = None, environment: dict[str, str] | None = None,
               device_requests: list[Any] | None = None, shm_size: str | None = None,
               user: str | None = None, read_only: bool = False,
               tmpfs: dict[str, str] | None = None,
               network_mode: str | None = None) -> FakeContainer:
        name = self.engine.images[image]["name"]
        if image in self.engine.exports:  # made to be exported, never started
            exported = FakeContainer(None)
            exported.exported = self.engine.exports[image]
            return exported
        if command == ENTRY_PROBE:  # a well-behaved entrypoint: banner, arguments, status
            return FakeContainer(None, output=ENTRY_STDOUT, status=ENTRY_STATUS,
                                 errors="== Fake ==\n")
        if command in (PIP_LIST, DPKG_LIST):
            self.engine.calls.append(("packages", name, command[0]))
            listing = ('[{"name": "pip", "version": "25.3"}]' if command == PIP_LIST
                       else "python3\t3.13.5-1\n")
            return FakeContainer(None, output=listing)
        offline = network_disabled or network_mode == "none"
        self.engine.calls.append(("create", name, image, offline))
        report = RunReport(image=name, python="3.13.5", platform="linux-x86_64",
                           gpu_mode=(environment or {})["NGC_GPU"], gpu_expected=False)
        report.checks.append(CheckResult("python.version", "T0", "pass", "3.13 as expected"))
        if name in self.engine.fail_validation:
            report.checks.append(CheckResult("framework.import", "T0", "fail",
                                             "ImportError: libcudnn.so.9", fault="image"))
        report.checks.append(CheckResult("gpu.visible", "T1", "skip", "no GPU"))
        container = FakeContainer(report, hangs=name in self.engine.hang_validation)
        self.created.append(container)
        return container

    def run(self, image: str, command: list[str], *, entrypoint: list[str], remove: bool,
            network_disabled: bool, stderr: bool) -> bytes:
        """The size gate's file listing: one large file per image."""
        self.engine.calls.append(("run", self.engine.images[image]["name"], command[0]))
        return b"6000000000\t/opt/venv/lib/python3.13/site-packages/big/lib.so\n"


class FakeClient:
    """An `Engine` over the in-memory engine."""

    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.api = FakeApi(engine)
        self.containers = FakeContainers(engine)


@dataclass
class Setup:
    """A planned, rendered release against the fake engine and registry; `go` runs it."""

    plan: ReleasePlan
    rendered: dict[str, RenderedImage]
    tmp: Path
    keys: dict[str, ImageKey]
    engine: FakeEngine
    record: ReleaseRecord | None = None
    jobs: int = 1
    force: bool = False
    gpu_mode: str = "none"
    cluster: ClusterValidation | None = None  # --validate-on slurm
    promote: bool = True  # False: --no-promote

    def run(self, push: bool = True, record: ReleaseRecord | None = None) -> Run:
        self.record = record or self.record or ReleaseRecord(
            release=self.plan.release, registry=REGISTRY, manifest="26.11.yaml")
        ui = Ui(self.tmp / "logs", show_logs=False, stream=io.StringIO())
        inputs = RunInputs(plan=self.plan, rendered=self.rendered, keys=self.keys,
                           context_dir=self.tmp / "context", report_dir=self.tmp / "reports",
                           os_image_ids={"debian-trixie": OS_ID}, revision="0123abc",
                           source="https://example.invalid/ngc")
        policy = RunPolicy(push=push, gpu_mode=self.gpu_mode, jobs=self.jobs, force=self.force,
                           promote=self.promote)
        engine: Engine = FakeClient(self.engine)
        return Run(inputs, policy, RunServices(engine, ui, cluster=self.cluster),
                   RunState(self.record, self.tmp / "release.json"))

    def go(self, push: bool = True, only: list[str] | None = None) -> ReleaseRecord:
        run = self.run(push)
        try:
            run_images(run, self.plan.select(only or []))
        finally:
            run.ui.close()
        return run.state.record


def fake_registry(engine: FakeEngine) -> Registry:
    registry: Registry = FakeRegistry(engine)
    return registry


@dataclass
class TableRegistry:
    """A `Registry` that is a table: (name, tag) -> digest, and digest -> manifest."""

    tags: dict[tuple[str, str], str] = field(default_factory=dict)
    manifests: dict[str, Manifest] = field(default_factory=dict)
    address: str = REGISTRY
    down: bool = False  # every call fails as an unreachable registry does
    blobs: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (name, digest) -> bytes

    def manifest_digest(self, name: str, reference: str) -> str | None:
        if self.down:
            raise RegistryError(f"https://{self.address}/v2/: connection refused")
        return self.tags.get((name, reference))

    def get_manifest(self, name: str, reference: str) -> Manifest | None:
        return self.manifests.get(f"{name}@{reference}")

    def put_manifest(self, name: str, tag: str, manifest: Manifest) -> str:
        self.tags[(name, tag)] = manifest.digest
        return manifest.digest

    def list_tags(self, name: str) -> list[str]:
        return sorted(tag for (held, tag) in self.tags if held == name)

    def put_blob(self, name: str, data: bytes) -> str:
        return _put_blob(self.blobs, name, data)

    def get_blob(self, name: str, digest: str) -> bytes:
        if self.down:
            raise RegistryError(f"https://{self.address}/v2/: connection refused")
        return _get_blob(self.blobs, self.address, name, digest)


DIGEST = "sha256:" + "aa" * 32
OTHER = "sha256:" + "bb" * 32


def published(names: list[str]) -> ReleaseRecord:
    """A record whose images were all pushed, at DIGEST."""
    record = ReleaseRecord(release="26.11", registry="localhost:5000", manifest="26.11.yaml")
    for name in names:
        image = ImageRecord(name=name, kind="framework")
        image.push.status, image.push.digest = "ok", DIGEST
        record.images[name] = image
    return record


@dataclass
class StoringRegistry(TableRegistry):
    """A table registry that keeps what is put into it, by tag and by digest, and hands a
    blob out as a download (the SquashFS start's `download_blob`)."""

    puts: list[tuple[str, str]] = field(default_factory=list)
    downloads: int = 0

    def put_manifest(self, name: str, tag: str, manifest: Manifest) -> str:
        self.puts.append((name, tag))
        for reference in (tag, manifest.digest):
            self.manifests[f"{name}@{reference}"] = manifest
        return super().put_manifest(name, tag, manifest)

    def download_blob(self, name: str, digest: str, size: int, target: Path) -> None:
        self.downloads += 1
        data = self.get_blob(name, digest)
        if len(data) != size:
            raise RegistryError(f"{name}@{digest}: {len(data)} bytes, not {size}")
        target.write_bytes(data)
