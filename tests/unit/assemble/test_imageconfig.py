"""The built image's config written again at the lock's epoch: the same bytes whatever the
engine and the time of the build, history layers told exactly, and an engine that answers
something else refused."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import docker.errors
import pytest

from ngc_builder.assemble.imageconfig import (
    KnownConfigs,
    config_bytes,
    empty_layers,
    epoch_time,
    reproducible_image,
)
from ngc_builder.errors import StepError
from ngc_builder.services.engine import Engine

pytestmark = pytest.mark.unit
EPOCH = 1795392000
SHELL = "/opt/ngc/bin/ngc-build-shell -c"


def step(created_by: str, size: int = 0, created: int = 1796000000) -> dict[str, Any]:
    return {"CreatedBy": created_by, "Size": size, "Created": created, "Id": "<missing>",
            "Comment": ""}


OS = step("ngc-builder: rootfs of a locked package set", 119_000_000)
OWN = [step(f"/bin/sh -c #(nop)  ARG SOURCE_DATE_EPOCH={EPOCH}"),
       step(f"{SHELL} #(nop) ADD file:0a in / ", 823),
       step(f"|1 SOURCE_DATE_EPOCH={EPOCH} {SHELL} mkdir -p /opt/ngc"),  # wrote only a folder
       step(f"|1 SOURCE_DATE_EPOCH={EPOCH} {SHELL} true"),  # wrote nothing
       step("/bin/sh -c #(nop)  LABEL org.ngc-builder.key=k")]


def inspection(image_id: str, layers: int, parent: str = "", **times: str) -> dict[str, Any]:
    return {"Id": image_id, "Parent": parent, "Architecture": "amd64", "Os": "linux",
            "Created": times.get("created", "2026-11-29T07:00:00Z"),
            "Container": times.get("container", "c0ffee"), "DockerVersion": "20.10.24",
            "Config": {"Env": ["PATH=/usr/bin"], "Labels": {"org.ngc-builder.key": "k"},
                       "Image": times.get("image", "sha256:" + "ab" * 32)},
            "RootFS": {"Type": "layers", "Layers": [f"sha256:{n:064x}" for n in range(layers)]}}


class ChainApi:
    """An engine's view of an image built by the classic builder on the loaded OS image:
    one intermediate image per step, each with its layers so far."""

    def __init__(self, layer_counts: list[int], loaded_id: str | None = None) -> None:
        self.images: dict[str, dict[str, Any]] = {"os": inspection("os", 1)}
        parent = "os"
        for n, count in enumerate(layer_counts):
            self.images[f"step{n}"] = inspection(f"step{n}", count, parent)
            parent = f"step{n}"
        self.top = parent
        self.loaded: list[bytes] = []
        self.archives: list[bytes] = []
        self.loaded_id = loaded_id
        self.pulled = [OS, *OWN]  # the history of an image pulled, not built here

    def inspect_image(self, image: str) -> dict[str, Any]:
        if image not in self.images:
            raise docker.errors.ImageNotFound(f"No such image: {image}")
        return self.images[image]

    def history(self, image: str) -> list[dict[str, Any]]:
        built = ["os", *(f"step{n}" for n in range(len(OWN)))]
        steps = [OS, *OWN[: built.index(image)]] if image in built else self.pulled
        return list(reversed(steps))

    def load_image(self, data: IO[bytes]) -> Iterator[dict[str, Any]]:
        self.archives.append(data.read())
        with tarfile.open(fileobj=io.BytesIO(self.archives[-1])) as tar:
            manifest = json.loads(cast(IO[bytes], tar.extractfile("manifest.json")).read())
            config = cast(IO[bytes], tar.extractfile(manifest[0]["Config"])).read()
        self.loaded.append(config)
        new_id = self.loaded_id or f"sha256:{hashlib.sha256(config).hexdigest()}"
        parsed = json.loads(config)
        loaded = {**inspection(new_id, len(parsed["rootfs"]["diff_ids"])),
                  "Config": parsed["config"]}
        self.images[manifest[0]["RepoTags"][0]] = self.images[new_id] = loaded
        yield {"stream": "Loaded image"}


class Client:
    def __init__(self, api: ChainApi) -> None:
        self.api = api


LAYERS = [1, 2, 3, 3, 3]  # the ARG, the ADD, the RUN's folder, the RUN that wrote nothing, LABEL


def test_each_steps_layer_is_read_from_its_intermediate_image(tmp_path: Path) -> None:
    api = ChainApi(LAYERS)
    engine = cast(Engine, Client(api))
    history = list(reversed(api.history(api.top)))
    assert empty_layers(engine, "base", api.images[api.top], history,
                        KnownConfigs(tmp_path)) == [False, True, False, False, True, True]


def test_the_same_build_at_another_time_on_another_engine_gives_the_same_bytes() -> None:
    history = [OS, *OWN]
    empty = [False, True, False, False, True, True]
    first = config_bytes(inspection("a", 3), history, empty, EPOCH)
    later = [{**entry, "Created": entry["Created"] + 86400} for entry in history]
    second = config_bytes(inspection("b", 3, created="2026-12-30T01:02:03Z", container="beef",
                                     image="sha256:" + "cd" * 32), later, empty, EPOCH)
    assert first == second
    config = json.loads(first)
    assert config["created"] == epoch_time(EPOCH) == "2026-11-23T00:00:00Z"
    assert {entry["created"] for entry in config["history"]} == {epoch_time(EPOCH)}
    assert config["config"]["Image"] == ""
    assert not {"container", "container_config", "docker_version"} & set(config)
    assert [bool(entry.get("empty_layer")) for entry in config["history"]] == empty
    assert first == json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def test_the_image_is_loaded_as_its_config_alone_and_takes_the_configs_id(
        tmp_path: Path) -> None:
    api = ChainApi(LAYERS)
    known = KnownConfigs(tmp_path)
    new_id = reproducible_image(cast(Engine, Client(api)), "base", api.top, "ngc-local/base:x",
                                EPOCH, known)
    assert known.empty_layers(new_id) == [False, True, False, False, True, True]
    assert new_id == f"sha256:{hashlib.sha256(api.loaded[0]).hexdigest()}"
    with tarfile.open(fileobj=io.BytesIO(api.archives[0])) as tar:  # what the engine got
        names = tar.getnames()
        manifest = json.loads(cast(IO[bytes], tar.extractfile("manifest.json")).read())
    assert names == [f"{new_id[7:]}.json", "manifest.json"]  # no layer is sent
    assert len(manifest[0]["Layers"]) == 3 and manifest[0]["RepoTags"] == ["ngc-local/base:x"]


def test_an_engine_that_stores_another_config_is_refused(tmp_path: Path) -> None:
    api = ChainApi(LAYERS, loaded_id="sha256:" + "ee" * 32)
    with pytest.raises(StepError, match="re-encodes configs"):
        reproducible_image(cast(Engine, Client(api)), "base", api.top, "ngc-local/base:x", EPOCH,
                           KnownConfigs(tmp_path))


def test_an_unknown_parents_steps_are_told_by_their_instruction_and_the_count(
        tmp_path: Path) -> None:
    """No intermediates and no config kept (an OS pulled by reference): a RUN with bytes wrote
    a layer, a `#(nop)` ENV none, and the RUNs that wrote no bytes are settled by the layer
    count when all or none of them wrote one."""
    api = ChainApi([])
    engine, known = cast(Engine, Client(api)), KnownConfigs(tmp_path)
    history = [OS, *OWN]
    for layers, expected in ((2, [False, True, False, True, True, True]),
                             (4, [False, True, False, False, False, True])):
        api.images["pulled"] = inspection("pulled", layers)
        assert empty_layers(engine, "jax", api.images["pulled"], history, known) == expected
    api.images["pulled"] = inspection("pulled", 3)  # one of two: which one is not known
    with pytest.raises(StepError, match="cannot tell which of 2 steps"):
        empty_layers(engine, "jax", api.images["pulled"], history, known)


def test_a_known_parents_own_config_says_which_steps_wrote_a_layer(tmp_path: Path) -> None:
    """Where the count cannot tell (a WORKDIR that made a folder, a RUN that wrote nothing),
    the parent's kept config can: it is used when its bytes still hash to the parent's ID."""
    api = ChainApi([])
    engine, known = cast(Engine, Client(api)), KnownConfigs(tmp_path)
    history = [OS, step(f"{SHELL} #(nop) WORKDIR /w"), step(f"{SHELL} true")]
    config = config_bytes(inspection("p", 2), history, [False, False, True], EPOCH)
    parent_id = f"sha256:{hashlib.sha256(config).hexdigest()}"
    api.pulled = history
    api.images["pulled"] = {**inspection(parent_id, 2), "Id": parent_id}
    known.keep(config)
    assert empty_layers(engine, "jax", api.images["pulled"], history, known) == \
        [False, False, True]
    (tmp_path / f"{parent_id[7:]}.json").write_bytes(config.replace(b"true", b"tru3"))
    assert known.empty_layers(parent_id) is None  # changed: no longer that image's config


def test_a_run_whose_text_says_nop_is_not_taken_for_one(tmp_path: Path) -> None:
    """`RUN echo '#(nop)  ENV'` is a RUN: its layer is counted, not dropped from the history."""
    api = ChainApi([])
    api.pulled = [OS, step(f"{SHELL} echo '#(nop)  ENV A=1' > /a", 0)]
    api.images["pulled"] = inspection("pulled", 2)
    assert empty_layers(cast(Engine, Client(api)), "jax", api.images["pulled"], api.pulled,
                        KnownConfigs(tmp_path)) == [False, False]
