"""Tags named after an image's digest: `sha256-<hex><suffix>`, the scheme cosign, oras and the
OCI 1.1 referrers fallback use for what refers to that image (SBOM, signature, attestation,
referrers index), so any registry holds them, referrers API or not."""

from __future__ import annotations

import hashlib

from ngc_builder.services.reference import DIGEST_RE

__all__ = ["DIGEST_RE", "content_digest", "digest_tag"]


def digest_tag(image_digest: str, suffix: str = "") -> str:
    """'sha256:<hex>' -> 'sha256-<hex><suffix>'."""
    if not DIGEST_RE.fullmatch(image_digest):
        raise ValueError(f"{image_digest!r} is not a sha256 digest")
    return image_digest.replace(":", "-", 1) + suffix


def content_digest(data: bytes) -> str:
    """The registry's name for these bytes: 'sha256:<hex>'."""
    return "sha256:" + hashlib.sha256(data).hexdigest()
