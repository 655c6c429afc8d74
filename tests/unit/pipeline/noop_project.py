"""A published release as its last whole run left it, and the registry it left, for the no-op
memo's tests (test_noop.py, test_noop_trust.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ngc_builder.pipeline import noop
from ngc_builder.pipeline.options import ReleaseOptions
from ngc_builder.services.registry import parse_registry
from tests.unit.services.http_server import QuietHandler, serving

DIGEST = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64
BLOB = "sha256:" + "c" * 64


@dataclass
class Held:
    """What the test registry holds: manifest path -> digest, blob paths; every request."""

    manifests: dict[str, str] = field(default_factory=dict)
    blobs: set[str] = field(default_factory=set)
    requests: list[str] = field(default_factory=list)
    down: bool = False  # every answer a 503


def registry_for(held: Held) -> type[QuietHandler]:
    class Registry(QuietHandler):
        def do_HEAD(self) -> None:
            held.requests.append(f"HEAD {self.path}")
            if held.down:
                self.answer(503)
            elif self.path in held.manifests:
                self.answer(200, headers={"Docker-Content-Digest": held.manifests[self.path]})
            else:
                self.answer(200 if self.path in held.blobs else 404)

        def do_GET(self) -> None:
            held.requests.append(f"GET {self.path}")
            self.answer(404)
    return Registry


@dataclass(frozen=True)
class Project:
    options: ReleaseOptions
    record: Path
    held: Held
    address: str


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    """A published release as its last whole run left it: the manifest, its lock, a template,
    the record, and a registry holding the release tag, the key tag and a blob."""
    monkeypatch.setenv("NGC_GPU", "none")
    for path, text in {"releases/26.11.yaml": "release: '26.11'\n",
                       "releases/26.11.lock.json": "{}\n",
                       "templates/base.Dockerfile.j2": "FROM scratch\n"}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    record = tmp_path / "build" / "26.11" / "release.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"release": "26.11"}\n')
    held = Held({"/v2/jax/manifests/26.11-py3": DIGEST, "/v2/jax/manifests/key-1": DIGEST},
                {f"/v2/jax/blobs/{BLOB}"})
    with serving(registry_for(held)) as address:
        options = ReleaseOptions(tmp_path / "releases" / "26.11.yaml", registry=address,
                                 build_dir=tmp_path / "build", show_logs=False)
        registry = parse_registry(address)
        inputs = noop.fingerprint(options)
        registry.manifest_digest("jax", "26.11-py3")
        registry.manifest_digest("jax", "key-1")
        registry.observed["blob", "jax", BLOB] = "blob"  # as `get_blob` leaves it
        noop.remember(options, inputs, registry, record)
        held.requests.clear()
        yield Project(options, record, held, address)


def answered(options: ReleaseOptions) -> noop.NoopAnswer | None:
    return noop.answered(options, noop.fingerprint(options))
