"""The lock file: one package per line, stable bytes, damaged locks named."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.lock.models import ImageLock, ReleaseLock, dump_lock, load_lock, lock_path
from tests.unit.locks import deb, sha, wheel

pytestmark = pytest.mark.unit


def sample() -> ReleaseLock:
    return ReleaseLock(release="26.11", images={
        "jax": ImageLock(inputs={"pip": ["jax==0.12.0"]},
                         pip=[wheel("jax", "0.12.0"), wheel("numpy", "2.5.5")]),
        "base": ImageLock(inputs={"apt": ["python3"]}, apt=[deb("python3", "3.13.5-1")]),
        "cntk": ImageLock(inputs={}, error="pip: no matching distribution"),
    })


def test_lock_lives_next_to_its_manifest() -> None:
    assert lock_path(Path("releases/26.11.yaml")) == Path("releases/26.11.lock.json")


def test_dump_then_load_gives_the_same_lock(tmp_path: Path) -> None:
    path = tmp_path / "26.11.lock.json"
    path.write_text(dump_lock(sample()))
    assert load_lock(path) == sample()
    assert dump_lock(sample()) == path.read_text()


def test_one_package_per_line_for_a_readable_diff() -> None:
    lines = dump_lock(sample()).splitlines()
    numpy = [line for line in lines if '"numpy"' in line]
    assert len(numpy) == 1 and '"version": "2.5.5"' in numpy[0]
    assert [line.strip()[:1] for line in lines if "sha256" in line] == ["{"] * 3


def test_no_lock_is_none_and_a_damaged_lock_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "26.11.lock.json"
    assert load_lock(path) is None
    path.write_text(dump_lock(sample()).replace(sha("numpy==2.5.5"), "not-a-hash"))
    with pytest.raises(InputError) as caught:
        load_lock(path)
    line = next(number for number, text in enumerate(path.read_text().splitlines(), 1)
                if "not-a-hash" in text)
    assert line > 1 and str(caught.value).startswith(f"{path}:{line}: images.jax.pip.1.sha256: ")


@pytest.mark.parametrize(("text", "line", "field"), [
    ('{\n  "format": 2,\n  "release": "26.11",\n  "images": {}\n}\n', 2, "format"),
    ('{\n  "format": "1",\n  "images": {}\n}\n', 2, "format"),
    ('{\n  "format": 1,\n  "release": "26.11",\n  "images": {\n}\n', 6, "lock"),
])
def test_an_unknown_format_or_broken_json_is_refused_at_its_line(
        tmp_path: Path, text: str, line: int, field: str) -> None:
    path = tmp_path / "26.11.lock.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_lock(path)
    assert str(caught.value.problems[0]).startswith(f"{path}:{line}: {field}: ")


def test_nothing_that_could_carry_shell_syntax_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "26.11.lock.json"
    path.write_text(dump_lock(sample()).replace('"3.13.5-1"', '"1; rm -rf /"'))
    with pytest.raises(InputError, match=r"images\.base\.apt\.0\.version"):
        load_lock(path)
