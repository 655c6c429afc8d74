"""A release record that cannot be read is one line naming the file and what is wrong in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.records.record import load_record

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "reason"), [
    ('{"release": "26', "Invalid JSON: EOF while parsing a string at line 1 column 15"),
    ("\x00 garbage", "Invalid JSON: expected value at line 1 column 1"),
    ('{"release": "26.11", "registry": "r", "manifest": "m", "images": []}',
     "images: Input should be an object"),
])
def test_a_damaged_record_is_one_line_with_its_reason(tmp_path: Path, text: str,
                                                      reason: str) -> None:
    path = tmp_path / "release.json"
    path.write_text(text)
    with pytest.raises(InputError) as refused:
        load_record(path)
    assert str(refused.value) == (f"{path}:1: (record): unreadable release record ({reason}); "
                                  "move it away to start this release afresh")


def _with_jax_platforms(platforms: str) -> str:
    return ('{"release": "26.11", "registry": "r", "manifest": "m", "images": {"jax": '
            '{"name": "jax", "kind": "framework", "platforms": ' + platforms + '}}}')


@pytest.mark.parametrize(("platforms", "reason"), [
    # Its key names a tag (`<rc>.<arch>`) and a report file: no path, no unknown platform.
    ('{"../../x": {}}', "images.jax.platforms: Value error, not another platform we build: "
                        "'../../x'"),
    ('{"linux/amd64": {}}', "images.jax.platforms: Value error, not another platform we "
                            "build: 'linux/amd64'"),
    # Its digest is pulled and put in an index: a digest and nothing else.
    ('{"linux/arm64": {"digest": "../../v2/_catalog"}}',
     "images.jax.platforms.linux/arm64.digest: String should match pattern "
     "'^sha256:[0-9a-f]{64}$'"),
])
def test_a_hand_edited_platform_entry_is_refused_in_one_line(
        tmp_path: Path, platforms: str, reason: str) -> None:
    path = tmp_path / "release.json"
    path.write_text(_with_jax_platforms(platforms))
    with pytest.raises(InputError) as refused:
        load_record(path)
    assert str(refused.value) == (f"{path}:1: (record): unreadable release record ({reason}); "
                                  "move it away to start this release afresh")
