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
