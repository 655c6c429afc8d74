"""No credential in what the builder writes or says; files replaced whole, even by two
writers at once."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from ngc_builder.assemble.image import project_source
from ngc_builder.errors import Problem, StepError
from ngc_builder.files import write_atomic
from ngc_builder.redact import strip_userinfo

pytestmark = pytest.mark.unit
TOKEN = "glpat-Secret123"


@pytest.mark.parametrize(("given", "expected"), [
    (f"https://gitlab-ci-token:{TOKEN}@gitlab.example.com/ml/ngc.git",
     "https://gitlab.example.com/ml/ngc.git"),
    (f"http://user:{TOKEN}@mirror.example.com:8080/debian",
     "http://mirror.example.com:8080/debian"),
    (f"ssh://git:{TOKEN}@host/repo", "ssh://host/repo"),
    (f"pulling from https://{TOKEN}@ghcr.io/x and https://a:b@c.io/y done",
     "pulling from https://ghcr.io/x and https://c.io/y done"),
    (f"https://robot:{TOKEN}@tail@reg.example/x:t", "https://reg.example/x:t"),
    (f"https://robot:a@b:{TOKEN}@c@reg.example", "https://reg.example"),
    (f"https://robot:p%40ss%3A{TOKEN}@reg.example/x", "https://reg.example/x"),
    (f"'https://u:{TOKEN}@@h/x' and https://h/a@b", "'https://h/x' and https://h/a@b"),
    ("https://registry.example.com/v2/jax/manifests/sha256:abc", None),
    ("git@github.com:org/repo.git", None),  # scp-like: no credential in it
    ("mail me at someone@example.com", None),
])
def test_userinfo_is_stripped_from_every_url(given: str, expected: str | None) -> None:
    assert strip_userinfo(given) == (given if expected is None else expected)


def test_step_errors_and_problems_carry_no_credential() -> None:
    error = StepError("base", "push", f"https://u:{TOKEN}@r.example.com/v2/: HTTP 500")
    assert TOKEN not in str(error) and TOKEN not in error.message
    problem = Problem("m.yaml", 3, "source", f"'https://u:{TOKEN}@h/x' is odd")
    assert TOKEN not in str(problem)


def test_the_source_label_never_has_the_clone_token(tmp_path: Path) -> None:
    configured = f"https://gitlab-ci-token:{TOKEN}@gitlab.example.com/ml/ngc.git"
    assert project_source(tmp_path, configured) == "https://gitlab.example.com/ml/ngc.git"


@pytest.mark.parametrize(("remote", "label"), [
    ("git@github.com:acme/ngc-builder.git", "git@github.com:acme/ngc-builder.git"),
    ("ssh://git@gitlab.example.com/ml/ngc.git", "ssh://gitlab.example.com/ml/ngc.git"),
    ("/srv/checkouts/ngc-builder", "unknown"),
    ("file:///srv/checkouts/ngc-builder", "unknown"),
    ("../ngc-builder", "unknown"),
])
def test_a_remote_that_is_a_folder_of_the_build_host_is_not_a_source(
        tmp_path: Path, remote: str, label: str) -> None:
    assert project_source(tmp_path, remote) == label


def test_written_files_lose_credentials(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "release.json"
    write_atomic(target, json.dumps({"source": f"https://x:{TOKEN}@h.example.com/r"}))
    assert json.loads(target.read_text()) == {"source": "https://h.example.com/r"}


def test_concurrent_writers_never_see_half_a_file_or_lose_their_temp_file(
    tmp_path: Path,
) -> None:
    target = tmp_path / "release.json"
    failures: list[BaseException] = []
    seen: list[dict[str, int]] = []

    def writer(number: int) -> None:
        try:
            for step in range(25):
                write_atomic(target, json.dumps({"writer": number, "step": step}) + "\n")
                seen.append(json.loads(target.read_text()))
        except BaseException as exc:  # collected: a thread's exception is otherwise lost
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(seen) == 100 and all(set(entry) == {"writer", "step"} for entry in seen)
    assert [p.name for p in tmp_path.iterdir()] == ["release.json"]  # no temp file left
