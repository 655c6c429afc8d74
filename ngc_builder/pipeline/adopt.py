"""What a run records of an image it adopts from the registry (the registry holds its content
key, published by another run or another release): the labels of the published image's own
config, and the validation its signed attestation states. A rerun with a new record, or the
next month reusing a shared layer, then reports the image as it was validated, not as blank.

The registry's answers are hostile input: the registry service holds the manifest's and the
config's bytes to their digests (and to a size) for every caller; of the config, only the
builder's own labels are taken, one line and bounded each; the validation is taken only from an
envelope the release's key signed.
"""

from __future__ import annotations

import json

from cryptography.hazmat.primitives.asymmetric import ec

from ngc_builder.plan.dag import LABEL_PREFIX
from ngc_builder.publish.attest import attested_validation
from ngc_builder.records.record import ValidationRecord
from ngc_builder.services.registry import Registry, RegistryError

OWN_PREFIXES = (f"{LABEL_PREFIX}.", "org.opencontainers.image.")  # the labels the builder sets
LABEL_LIMIT = 400  # characters of one label value kept
LABELS_LIMIT = 200  # labels kept


def published_labels(registry: Registry, name: str, digest: str) -> dict[str, str]:
    """The builder's labels in the config of the image at `digest` ({} when unreadable, or
    when the registry answers other bytes than `digest`'s: get_manifest refuses them)."""
    try:
        manifest = registry.get_manifest(name, digest)
        if manifest is None:
            return {}
        config_digest = str(json.loads(manifest.body)["config"]["digest"])
        labels = json.loads(registry.get_blob(name, config_digest))["config"].get("Labels")
    except (RegistryError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    if not isinstance(labels, dict):
        return {}
    return dict(list(_own(labels).items())[:LABELS_LIMIT])


def _own(labels: dict[object, object]) -> dict[str, str]:
    return {key: value for key, value in labels.items()
            if isinstance(key, str) and isinstance(value, str) and key.startswith(OWN_PREFIXES)
            and _one_line(key + value, LABEL_LIMIT)}


def _one_line(text: str, limit: int) -> bool:
    """Printable (no line or paragraph separator, no bidi override) and bounded."""
    return len(text) <= limit and text.isprintable()


def published_validation(registry: Registry, name: str, digest: str,
                         public: ec.EllipticCurvePublicKey | None) -> ValidationRecord:
    """The validation of a published image: its attested verdict and tiers when the release's
    key attested it, else only that the registry holds it (`(published)`, no tiers)."""
    attested = None
    if public is not None:
        try:
            attested = attested_validation(registry, name, digest, public)
        except RegistryError:
            attested = None
    tiers = {key: value for key, value in (attested or {}).items()
             if key != "verdict" and _one_line(key + value, LABEL_LIMIT)}
    # What the key attested, not what we hope: a verdict other than pass is kept as such.
    verdict = (attested or {}).get("verdict", "pass")
    if not _one_line(verdict, LABEL_LIMIT):
        verdict = "unreadable"
    return ValidationRecord(status="ok", verdict=verdict, reused=True, error=None,
                            gpu_mode="(published)", tiers=tiers)
