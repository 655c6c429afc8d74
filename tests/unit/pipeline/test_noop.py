"""The no-op memo: a re-run answered from the last complete run only while every input and every
registry answer is the same; a forged, stale or unsigned memo is never taken at its word."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ngc_builder.commands.release import release_command
from ngc_builder.errors import InputError
from ngc_builder.pipeline import noop
from ngc_builder.pipeline.options import RunPolicy
from ngc_builder.records.claim import claim_release_dir
from ngc_builder.services.registry import parse_registry
from tests.conftest import REPO
from tests.unit.pipeline.noop_project import BLOB, OTHER, Project, answered
from tests.unit.pipeline.noop_project import project as project  # the fixture

pytestmark = pytest.mark.unit


def test_an_unchanged_release_is_answered_with_one_head_per_reference(project: Project) -> None:
    answer = answered(project.options)
    assert answer is not None
    assert (answer.release_dir, answer.checked) == (project.record.parent, 3)
    assert sorted(project.held.requests) == sorted([
        "HEAD /v2/jax/manifests/26.11-py3", "HEAD /v2/jax/manifests/key-1",
        f"HEAD /v2/jax/blobs/{BLOB}"])
    assert "nothing built, validated, pushed or moved" in noop.summary(answer)


@pytest.mark.parametrize("change", ["tag moved", "tag gone", "blob gone"])
def test_a_registry_that_changed_since_is_not_a_no_op(project: Project, change: str) -> None:
    if change == "tag moved":
        project.held.manifests["/v2/jax/manifests/key-1"] = OTHER
    elif change == "tag gone":
        del project.held.manifests["/v2/jax/manifests/26.11-py3"]
    else:
        project.held.blobs.clear()
    assert answered(project.options) is None


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "# edited\n")


@pytest.mark.parametrize("change", ["manifest", "lock", "template", "new framework file",
                                    "setting", "option", "signing key", "gpu"])
def test_any_input_that_changed_since_is_not_a_no_op(project: Project, change: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = project.options.manifest.parent.parent
    options = project.options
    if change == "manifest":
        _edit(options.manifest)
    elif change == "lock":
        _edit(root / "releases" / "26.11.lock.json")
    elif change == "template":
        _edit(root / "templates" / "base.Dockerfile.j2")
    elif change == "new framework file":
        (root / "frameworks" / "jax").mkdir(parents=True)
        (root / "frameworks" / "jax" / "probe.py").write_text("")
    elif change == "setting":
        monkeypatch.setenv("NGC_REGISTRY_INSECURE", "1")
    elif change == "option":
        options = dataclasses.replace(options, only=["jax"])
    elif change == "signing key":
        key = root / "cosign.key"
        key.write_text("another key\n")
        key.chmod(0o600)  # a key others can read is refused (test_noop_trust.py)
        monkeypatch.setenv("NGC_SIGNING_KEY", str(key))
    else:  # the same host with GPUs now: its preflight and GPU validation run
        monkeypatch.setenv("NGC_GPU", "required")
    assert answered(options) is None


def test_a_record_changed_since_is_not_a_no_op(project: Project) -> None:
    _edit(project.record)
    assert answered(project.options) is None


def test_a_memo_this_host_did_not_sign_is_not_taken_at_its_word(project: Project) -> None:
    """The attack: a memo dropped into the build folder that points at another registry
    holding whatever it claims; the fingerprint is right (anyone can compute it)."""
    memo_file = noop.memo_path(project.options)
    memo = json.loads(memo_file.read_text())
    memo["registry"] = "127.0.0.1:1"
    memo["references"] = []
    memo_file.write_text(json.dumps(memo))
    assert answered(project.options) is None
    memo["mac"] = "0" * 64
    memo_file.write_text(json.dumps(memo))
    assert answered(project.options) is None


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"mac": 1}', '{"version": 1}'])
def test_a_damaged_memo_is_no_memo(project: Project, text: str) -> None:
    noop.memo_path(project.options).write_text(text)
    assert answered(project.options) is None


def test_a_memo_key_cut_short_is_no_key(project: Project, tmp_path: Path) -> None:
    """The memo signed again with the short key itself: only the key's length refuses it."""
    short = b"short"
    (tmp_path / "state" / noop.MAC_KEY_FILE).write_bytes(short)
    memo_file = noop.memo_path(project.options)
    body = json.loads(memo_file.read_text())
    del body["mac"]
    inputs = noop.fingerprint(project.options)
    assert inputs is not None
    memo_file.write_text(json.dumps({**body, "mac": noop._mac(body, inputs, short)}))
    assert answered(project.options) is None


@pytest.mark.parametrize("change", ["as_json", "no push", "no promote"])
def test_json_runs_and_runs_that_publish_nothing_never_take_the_memo(project: Project,
                                                                change: str) -> None:
    options = project.options
    if change == "as_json":  # it prints this run's record: the run happens
        options = dataclasses.replace(options, as_json=True)
    else:
        push, promote = change != "no push", change != "no promote"
        options = dataclasses.replace(options, policy=RunPolicy(push=push, promote=promote))
        assert not noop.applies(options)
    assert answered(options) is None


def test_a_json_run_leaves_a_memo_for_the_next_plain_one(project: Project) -> None:
    as_json = dataclasses.replace(project.options, as_json=True)
    noop.forget(as_json)
    registry = parse_registry(project.address)
    registry.manifest_digest("jax", "26.11-py3")
    noop.remember(as_json, noop.fingerprint(as_json), registry, project.record)
    assert answered(project.options) is not None


def test_a_tag_moved_while_the_run_went_on_is_not_what_the_memo_accepts(
        project: Project) -> None:
    """The memo holds what the run itself saw, never a look taken after it."""
    registry = parse_registry(project.address)
    inputs = noop.fingerprint(project.options)
    registry.manifest_digest("jax", "26.11-py3")
    project.held.manifests["/v2/jax/manifests/26.11-py3"] = OTHER  # another client, mid-run
    noop.remember(project.options, inputs, registry, project.record)
    assert answered(project.options) is None


def test_an_input_edited_while_the_run_went_on_is_not_what_the_memo_accepts(
        project: Project) -> None:
    """The fingerprint is taken before the run reads anything: the edit it did not build
    makes the next run a whole one."""
    registry = parse_registry(project.address)
    inputs = noop.fingerprint(project.options)
    _edit(project.options.manifest.parent.parent / "templates" / "base.Dockerfile.j2")
    registry.manifest_digest("jax", "26.11-py3")
    noop.remember(project.options, inputs, registry, project.record)
    assert answered(project.options) is None


def test_a_registry_that_does_not_answer_leaves_it_to_the_whole_run(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGC_RETRIES", "1")
    project.held.down = True
    assert answered(project.options) is None
    assert noop.memo_path(project.options).is_file()  # the whole run decides what it means


def test_a_run_holding_the_release_folder_is_named(project: Project) -> None:
    with claim_release_dir(project.record.parent, lambda _: None), \
            pytest.raises(InputError, match="is in use by ngc-builder PID"):
        answered(project.options)


def test_the_command_answers_without_loading_the_whole_run(project: Project) -> None:
    """`ngc-builder release` itself: the summary, exit 0, and none of the engine's SDK, the
    templates or the models imported (what made a no-op re-run cost seconds)."""
    options = project.options
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ngc_builder", "release",
         str(options.manifest), "--registry", project.address, "--build-dir",
         str(options.build_dir), "--quiet"],
        capture_output=True, text=True, cwd=REPO, check=False, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "26.11: nothing to do" in done.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "ngc_builder.pipeline.noop" in imported
    assert not imported & {"docker", "jinja2", "pydantic", "ngc_builder.pipeline.flow"}


def test_a_whole_run_forgets_the_memo_first(project: Project) -> None:
    """The run that follows a change may fail half-way: the memo must not outlive it."""
    _edit(project.options.manifest)  # not a no-op any more; the manifest no longer loads
    with pytest.raises(InputError):
        release_command(project.options)
    assert not noop.memo_path(project.options).exists()


def test_a_memo_that_cannot_be_written_leaves_the_run_as_it_was(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state folder that cannot hold the memo key: no memo, no error, the next run whole."""
    monkeypatch.setenv("NGC_STATE_DIR", str(project.record))  # a file: no folder under it
    registry = parse_registry(project.address)
    registry.manifest_digest("jax", "26.11-py3")
    noop.remember(project.options, noop.fingerprint(project.options), registry,
                  project.record)
    assert not noop.memo_path(project.options).exists()


def test_a_memo_key_cut_short_is_replaced_when_the_next_memo_is_kept(tmp_path: Path,
                                                                     project: Project) -> None:
    """A run killed while it made the key leaves it short: the next run that keeps a memo
    makes a whole one (before, a short key stayed, and no memo was ever taken again)."""
    key = tmp_path / "state" / noop.MAC_KEY_FILE
    key.write_bytes(b"")
    key.chmod(0o600)
    assert noop._mac_key(create=False) is None
    made = noop._mac_key(create=True)
    assert made is not None and len(made) == noop.KEY_BYTES and key.read_bytes() == made
