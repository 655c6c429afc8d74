"""The CA bundle given to builds (`--ca-bundle`, $NGC_CA_BUNDLE, else the host's)."""

from __future__ import annotations

import os
from pathlib import Path

from ngc_builder.errors import InputError, Problem

SYSTEM_CA_BUNDLES = (
    Path("/etc/ssl/certs/ca-certificates.crt"),  # Debian, Ubuntu
    Path("/etc/pki/tls/certs/ca-bundle.crt"),  # Fedora, RHEL
)


def resolve_ca_bundle(option: Path | None) -> Path | None:
    """--ca-bundle, else $NGC_CA_BUNDLE, else the host's system bundle when present."""
    chosen = option or (Path(os.environ["NGC_CA_BUNDLE"]) if os.environ.get("NGC_CA_BUNDLE")
                        else None)
    if chosen is None:
        return next((path for path in SYSTEM_CA_BUNDLES if path.is_file()), None)
    try:
        content = chosen.read_bytes()
    except OSError as exc:
        raise InputError([Problem(str(chosen), 1, "ca-bundle", exc.strerror or str(exc))]) from None
    if b"-----BEGIN CERTIFICATE-----" not in content:
        # An empty bundle would make every HTTPS download in the build fail much later.
        raise InputError([Problem(str(chosen), 1, "ca-bundle", "holds no PEM certificate")])
    return chosen
