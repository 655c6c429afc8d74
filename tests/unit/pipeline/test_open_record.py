"""A release run against another registry keeps the first registry's record: its digests are
there for `verify` and for the next run against it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.images import open_record
from ngc_builder.plan.dag import ReleasePlan, plan_release
from ngc_builder.publish.verify import load_published
from ngc_builder.records.record import record_path, save_record
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import DIGEST, OTHER, TableRegistry, published

pytestmark = pytest.mark.unit
FIRST, SECOND = "localhost:5000", "registry.example.com/team"


def plan_for(write_release: WriteRelease, address: str) -> ReleasePlan:
    return plan_release(load_release(write_release(GOOD_RELEASE)), TableRegistry(address=address))


def test_a_run_against_another_registry_keeps_the_first_ones_digests(
    write_release: WriteRelease, tmp_path: Path,
) -> None:
    path = record_path(tmp_path, "26.11")
    save_record(published(["jax"]), path)  # a run against FIRST pushed jax at DIGEST
    second = open_record(path, plan_for(write_release, SECOND), Path("26.11.yaml"))
    assert second.registry == SECOND and second.images == {}
    assert second.elsewhere[FIRST].images["jax"].push.digest == DIGEST
    second.images["jax"] = published(["jax"]).images["jax"]
    second.images["jax"].push.digest = OTHER
    save_record(second, path)

    first = open_record(path, plan_for(write_release, FIRST), Path("26.11.yaml"))
    assert first.registry == FIRST and first.images["jax"].push.digest == DIGEST
    assert first.elsewhere[SECOND].images["jax"].push.digest == OTHER
    assert first.elsewhere[SECOND].elsewhere == {}  # kept once, not nested


def test_verify_reads_the_section_of_its_registry(write_release: WriteRelease,
                                                  tmp_path: Path) -> None:
    path = record_path(tmp_path, "26.11")
    save_record(published(["jax"]), path)
    second = open_record(path, plan_for(write_release, SECOND), Path("26.11.yaml"))
    save_record(second, path)
    assert load_published(tmp_path, "26.11", FIRST).images["jax"].push.digest == DIGEST
    assert load_published(tmp_path, "26.11", SECOND).images == {}
    with pytest.raises(InputError, match=r"no run of 26\.11 against elsewhere\.example\.com"):
        load_published(tmp_path, "26.11", "elsewhere.example.com")
