"""Stage 0, the OS image: mirror discovery and the pull -> bootstrap fallback."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import docker.errors
import pytest

from ngc_builder.assemble.osbase import _obtain, ensure_os_image, obtain_os_image
from ngc_builder.errors import StepError
from ngc_builder.manifest.models import BaseImage
from ngc_builder.services.engine import Engine
from ngc_builder.services.streams import LineSink
from tests.unit.fake_engine import FakeApi as SharedApi
from tests.unit.fake_engine import FakeClient as SharedClient
from tests.unit.fake_engine import FakeEngine

pytestmark = pytest.mark.unit

REF = "ngc-local/os-debian-bookworm:12"



def base_image(pull: str | None = "debian:bookworm", bootstrap: bool = True) -> BaseImage:
    data: dict[str, Any] = {
        "name": "debian-bookworm", "os": "debian", "os_version": "12", "python": "3.11",
        "glibc": "2.36", "apt_packages": ["python3"],
    }
    if pull is not None:
        data["pull"] = pull
    if bootstrap:
        data["bootstrap"] = {"suite": "bookworm"}
    return BaseImage.model_validate(data)


class FakeApi(SharedApi):
    """Pulls that stream the given chunks (or raise), and the images already present."""

    def __init__(self, pull_chunks: list[Mapping[str, Any]] | None = None,
                 pull_raises: Exception | None = None, images: set[str] | None = None) -> None:
        super().__init__(FakeEngine())
        self.pull_chunks = pull_chunks or []
        self.pull_raises = pull_raises
        self.present = images or set()
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def pull(self, repository: str, *, stream: bool, decode: bool, tag: str | None = None,
             ) -> Iterator[Mapping[str, Any]]:
        self.calls.append(("pull", (repository,), {"tag": tag, "stream": stream,
                                                   "decode": decode}))
        if self.pull_raises is not None:
            raise self.pull_raises
        return iter(self.pull_chunks)

    def tag(self, image: str, repository: str, tag: str) -> bool:
        self.calls.append(("tag", (image, repository, tag), {}))
        self.present.add(f"{repository}:{tag}")
        return True

    def inspect_image(self, image: str) -> dict[str, Any]:
        if image not in self.present:
            raise docker.errors.ImageNotFound(f"no such image: {image}")
        return {"Id": "sha256:" + "aa" * 32}

    def names(self) -> list[str]:
        return [name for name, _, _ in self.calls]


class FakeClient(SharedClient):
    def __init__(self, api: FakeApi) -> None:
        super().__init__(api.engine)
        self.api: FakeApi = api


PULL_ERROR: list[Mapping[str, Any]] = [
    {"status": "Pulling from library/debian", "id": "bookworm"},
    {"errorDetail": {"message": "Get \"https://registry-1.docker.io/v2/\": dial tcp: "
                                "lookup registry-1.docker.io: no such host"},
     "error": "Get \"https://registry-1.docker.io/v2/\": no such host"},
]
PULL_OK: list[Mapping[str, Any]] = [
    {"status": "Pulling from library/debian", "id": "bookworm"},
    {"status": "Status: Downloaded newer image for debian:bookworm"},
]


class Bootstraps(list[tuple[Any, BaseImage, str]]):
    """A bootstrapper that only records what it was asked to bootstrap."""

    def __call__(self, engine: Engine, base: BaseImage, ref: str, sink: LineSink) -> None:
        self.append((engine, base, ref))


@pytest.fixture
def bootstraps() -> Bootstraps:
    return Bootstraps()


# --- obtaining the image -----------------------------------------------------------------


def test_auto_falls_back_to_bootstrap_when_the_pull_stream_errors(
    bootstraps: Bootstraps,
) -> None:
    client = FakeClient(FakeApi(PULL_ERROR))
    base = base_image()
    lines: list[str] = []
    _obtain(client, base, REF, "auto", lines.append, bootstraps)
    assert client.api.calls == [
        ("pull", ("debian",), {"tag": "bookworm", "stream": True, "decode": True})]
    assert bootstraps == [(client, base, REF)]
    assert any(line.startswith("pull failed (") and "no such host" in line for line in lines)


def test_auto_falls_back_when_the_pull_call_itself_fails(
    bootstraps: Bootstraps,
) -> None:
    client = FakeClient(FakeApi(pull_raises=docker.errors.APIError("500 Server Error")))
    _obtain(client, base_image(), REF, "auto", lambda _: None, bootstraps)
    assert len(bootstraps) == 1
    assert "tag" not in client.api.names()


def test_pull_mode_raises_on_a_pull_stream_error(
    bootstraps: Bootstraps,
) -> None:
    client = FakeClient(FakeApi(PULL_ERROR))
    with pytest.raises(StepError) as caught:
        _obtain(client, base_image(), REF, "pull", lambda _: None, bootstraps)
    assert caught.value.image == "os-base"
    assert caught.value.step == "pull debian:bookworm"
    assert "no such host" in caught.value.message
    assert bootstraps == []
    assert "tag" not in client.api.names()


def test_auto_without_bootstrap_section_raises(
    bootstraps: Bootstraps,
) -> None:
    client = FakeClient(FakeApi(PULL_ERROR))
    with pytest.raises(StepError, match="pull debian:bookworm"):
        _obtain(client, base_image(bootstrap=False), REF, "auto", lambda _: None, bootstraps)
    assert bootstraps == []


def test_successful_pull_tags_the_os_ref(bootstraps: Bootstraps) -> None:
    client = FakeClient(FakeApi(PULL_OK))
    lines: list[str] = []
    _obtain(client, base_image(), REF, "auto", lines.append, bootstraps)
    assert client.api.calls[-1] == (
        "tag", ("debian:bookworm", "ngc-local/os-debian-bookworm", "12"), {})
    assert bootstraps == []
    assert "Status: Downloaded newer image for debian:bookworm" in lines


def test_bootstrap_mode_never_pulls(bootstraps: Bootstraps) -> None:
    client = FakeClient(FakeApi(PULL_OK))
    _obtain(client, base_image(), REF, "bootstrap", lambda _: None, bootstraps)
    assert client.api.calls == []
    assert len(bootstraps) == 1


def test_no_pull_reference_and_no_bootstrap_is_an_error() -> None:
    # BaseImage refuses this combination, so build it past validation.
    base = base_image(pull=None).model_copy(update={"bootstrap": None})
    with pytest.raises(StepError, match="no bootstrap section"):
        _obtain(FakeClient(FakeApi()), base, REF, "bootstrap", lambda _: None)


def test_ensure_os_image_reuses_an_existing_image(
    bootstraps: Bootstraps,
) -> None:
    client = FakeClient(FakeApi(PULL_OK, images={REF}))
    assert ensure_os_image(client, base_image(), REF, "auto", lambda _: None, bootstraps) == (
        "sha256:" + "aa" * 32)
    assert client.api.calls == []
    assert bootstraps == []


def test_pull_reference_with_a_registry_port_and_no_tag() -> None:
    client = FakeClient(FakeApi(PULL_OK))
    _obtain(client, base_image(pull="localhost:5000/debian"), REF, "pull", lambda _: None)
    assert client.api.calls[0] == (
        "pull", ("localhost:5000/debian",), {"tag": "latest", "stream": True, "decode": True})


class Locked(Bootstraps):
    """A locked bootstrapper that records its calls and leaves the image in the engine."""

    def __init__(self, api: FakeApi) -> None:
        super().__init__()
        self.api = api

    def __call__(self, engine: Engine, base: BaseImage, ref: str, sink: LineSink) -> None:
        super().__call__(engine, base, ref, sink)
        self.api.present.add(ref)


def test_a_locked_base_is_built_from_its_lock_not_pulled(bootstraps: Bootstraps) -> None:
    client = FakeClient(FakeApi(PULL_OK))
    locked = Locked(client.api)
    image_id, _ = obtain_os_image(client, base_image(), REF, "auto", lambda _: None,
                                  bootstraps, locked=locked)
    assert image_id == "sha256:" + "aa" * 32
    assert locked == [(client, base_image(), REF)]
    assert client.api.calls == [] and bootstraps == []


def test_asking_for_a_pull_still_pulls_a_locked_base(bootstraps: Bootstraps) -> None:
    client = FakeClient(FakeApi(PULL_OK))
    locked = Locked(client.api)
    obtain_os_image(client, base_image(), REF, "pull", lambda _: None, bootstraps,
                    locked=locked)
    assert client.api.names() == ["pull", "tag"] and locked == [] and bootstraps == []
