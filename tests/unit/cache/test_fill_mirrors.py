"""Where the cache fetches each locked .deb: the base's mirror, and for a fix a patch release
locked from a security suite (`pool/updates/...`) the security mirror."""

from __future__ import annotations

import pytest

from ngc_builder.cache import fill
from ngc_builder.cache.fill import by_mirror
from tests.unit.security.test_scan import deb

pytestmark = pytest.mark.unit


def test_security_fixes_come_from_the_security_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fill, "base_mirror", lambda loaded, name: "http://mirror.test/debian")
    monkeypatch.setenv("NGC_DEBIAN_SECURITY_MIRROR", "http://mirror.test/debian-security")
    locked = deb("bash", "5.2")
    fixed = deb("libssl3", "3.0.22").model_copy(
        update={"file": "pool/updates/main/o/openssl/libssl3_3.0.22_amd64.deb"})
    assert by_mirror(object(), "debian-trixie", [locked, fixed]) == {  # type: ignore[arg-type]
        "http://mirror.test/debian": [locked], "http://mirror.test/debian-security": [fixed]}
    assert by_mirror(object(), "debian-trixie", []) == {}  # type: ignore[arg-type]
