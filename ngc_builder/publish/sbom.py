"""An SBOM per published image: a CycloneDX 1.5 document of every package the lock put into the
image and its ancestors, pushed beside the image as an OCI artifact, and checked by verify.

The artifact is found by the tag `sha256-<hex>.sbom` (the scheme cosign and oras use) because
registries without the OCI referrers API, the distribution registry among them, cannot list
artifacts by subject; its manifest still names the image as `subject` for those that can.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

import docker.errors
import requests

from ngc_builder.lock.models import AptPackage, PipPackage, ReleaseLock, normalise
from ngc_builder.plan.dag import ReleasePlan
from ngc_builder.publish.artifact import (
    EMPTY_BLOB,
    Document,
    Layer,
    artifact_layer,
    artifact_manifest,
    mapping,
)
from ngc_builder.publish.tags import DIGEST_RE, content_digest, digest_tag
from ngc_builder.services.engine import Engine, discard
from ngc_builder.services.registry import Registry, RegistryError

SBOM_TYPE = "application/vnd.cyclonedx+json"

# Run by the image's own Python (3.9+, stdlib only): the raw licence fields of every
# distribution, and the first `License:` line of each Debian copyright file. What they mean
# is decided here, on the host, where it is tested.
LICENCE_SCRIPT = r"""
import glob, json, importlib.metadata as md
pypi, deb = {}, {}
for dist in md.distributions():
    meta = dist.metadata
    if meta is not None and meta.get("Name"):
        pypi.setdefault(meta.get("Name"), {"expression": meta.get("License-Expression"),
            "license": meta.get("License"), "classifiers": [c for c in
            meta.get_all("Classifier") or [] if c.startswith("License ::")]})
for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1 << 20).splitlines()
    except OSError:
        continue
    first = next((line for line in lines if line.startswith("License:")), "")
    deb[path.split("/")[4]] = {"format": lines[0] if lines else "", "license": first[8:]}
print(json.dumps({"pypi": pypi, "deb": deb}))
"""


class SbomError(Exception):
    """The SBOM of an image cannot be made (a lock entry missing, licences unreadable)."""


@dataclass(frozen=True)
class Licence:
    """What a package declares: an SPDX expression (PEP 639 `License-Expression`), or names as
    written (the `License` field, trove classifiers, a Debian copyright file)."""

    expression: str | None = None
    names: tuple[str, ...] = ()

    def cyclonedx(self) -> list[Document]:
        if self.expression:
            return [{"expression": self.expression}]
        return [{"license": {"name": name}} for name in self.names]


Licences = dict[str, Licence]  # "pypi/<name>" or "deb/<name>" -> what the package declares
Installed = Mapping[str, Mapping[str, str]]  # {"pip": {name: version}, "dpkg": {...}}


def sbom_tag(image_digest: str) -> str:
    """Where the SBOM of that image is tagged."""
    return digest_tag(image_digest, ".sbom")


def image_sbom(name: str, plan: ReleasePlan, lock: ReleaseLock, digest: str,
               licences: Licences, installed: Installed | None = None) -> Document:
    """The CycloneDX document of image `name` published at `digest`: every package the lock
    put into it and its ancestors, plus, given the image's listing (`build.packages.load`),
    what it holds beyond the lock (the OS image's own packages, the venv's pip). The same
    inputs give the same bytes: no clock, components sorted, the serial from the digest."""
    sbom_tag(digest)  # a digest that names no image makes no SBOM
    purl = f"pkg:oci/{name}@{digest}"
    found = _locked(name, plan, lock, licences)
    locked = {key for key, _ in found}  # a Debian package is locked whatever its arch
    for kind, versions in (installed or {}).items():
        for package, version in versions.items():
            key = f"pypi/{normalise(package)}" if kind == "pip" else f"deb/{package}"
            if key not in locked and kind in ("pip", "dpkg"):
                found[(key, "")] = _component(key, version, "", None, licences,
                                              {"ngc-builder:found-by": kind})
    components = sorted(found.values(), key=lambda component: str(component["bom-ref"]))
    return {
        "bomFormat": "CycloneDX", "specVersion": "1.5", "version": 1,
        "serialNumber": f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, purl)}",
        "metadata": {
            "tools": {"components": [{"type": "application", "name": "ngc-builder"}]},
            "component": {"type": "container", "bom-ref": purl, "name": name,
                          "version": plan.get(name).version, "purl": purl}},
        "components": components,
        "dependencies": [{"ref": purl, "dependsOn": [c["bom-ref"] for c in components]}],
    }


def _locked(name: str, plan: ReleasePlan, lock: ReleaseLock,
            licences: Licences) -> dict[tuple[str, str], Document]:
    """The lock's packages of the image and its ancestors, root first, keyed by what the image
    holds once (a pip name, a Debian name and arch): a child's upgrade replaces its parent's."""
    chain: list[str] = []
    node: str | None = name
    while node is not None:
        chain.insert(0, node)
        node = plan.get(node).parent
    found: dict[tuple[str, str], Document] = {}
    for image in chain:
        entry = lock.for_image(image)
        if entry is None:
            raise SbomError(f"the lock has no entry for {image}: no SBOM of {name}")
        rows: list[tuple[str, PipPackage | AptPackage, str]] = [
            *((f"pypi/{p.name}", p, "") for p in entry.pip),
            *((f"deb/{p.name}", p, p.arch) for p in entry.apt)]
        for key, package, arch in rows:
            found[(key, arch)] = _component(key, package.version, arch, package.sha256, licences,
                                            {"ngc-builder:file": package.file,
                                             "ngc-builder:layer": image})
    return found


def _component(key: str, version: str, arch: str, sha256: str | None, licences: Licences,
               properties: dict[str, str]) -> Document:
    """The component of package `key` ('pypi/<name>' or 'deb/<name>'). In its purl, name and
    version are percent-encoded ('+' is %2B; ':' is kept, as the purl spec says)."""
    kind, _, name = key.partition("/")
    purl = (f"pkg:{'pypi' if kind == 'pypi' else 'deb/debian'}/{quote(name, safe=':')}@"
            f"{quote(version, safe=':')}{f'?arch={arch}' if arch else ''}")
    component: Document = {
        "type": "library", "bom-ref": purl, "name": name, "version": version, "purl": purl,
        "properties": [{"name": p, "value": properties[p]} for p in sorted(properties)]}
    if sha256:
        component["hashes"] = [{"alg": "SHA-256", "content": sha256}]
    if key in licences and licences[key].cyclonedx():
        component["licenses"] = licences[key].cyclonedx()
    return component


def sbom_bytes(document: Document) -> bytes:
    """The document as pushed: keys sorted, so the same document is the same blob."""
    return (json.dumps(document, indent=1, sort_keys=True) + "\n").encode()


# --- licences ---------------------------------------------------------------------------


def licences_in_image(engine: Engine, image_id: str) -> Licences:
    """What the image's pip distributions and Debian packages declare, read once in a
    throwaway container without network. Unknown licences are left out, never guessed."""
    try:
        raw = json.loads(_script_output(engine, image_id))
        pypi = {f"pypi/{normalise(str(n))}": _pypi_licence(m) for n, m in raw["pypi"].items()}
        deb = {f"deb/{n}": _deb_licence(m) for n, m in raw["deb"].items()}
    except (docker.errors.DockerException, requests.RequestException, ValueError, KeyError,
            TypeError, AttributeError) as exc:
        raise SbomError(f"cannot read licences in {image_id[:19]}: "
                        f"{exc.__class__.__name__}: {exc}") from None
    return {key: licence for key, licence in sorted({**pypi, **deb}.items()) if licence}


def _script_output(engine: Engine, image_id: str) -> str:
    container = engine.containers.create(image_id, ["python", "-c", LICENCE_SCRIPT],
                                         network_disabled=True, entrypoint=[])
    try:
        container.start()
        status = int(container.wait(timeout=300).get("StatusCode", -1))
        output = container.logs(stdout=True, stderr=False)
    finally:
        discard(container)
    if status != 0:
        raise SbomError(f"reading licences in {image_id[:19]}: python exited {status}")
    return output.decode("utf-8", "replace")


def _pypi_licence(meta: dict[str, Any]) -> Licence | None:
    """License-Expression (SPDX by PEP 639), else a one-line `License` field, else the names
    of the licence classifiers. `UNKNOWN` is what old setuptools wrote for nothing."""
    expression = str(meta.get("expression") or "").strip()
    if expression:
        return Licence(expression=expression)
    text = str(meta.get("license") or "").strip()
    if text and "\n" not in text and len(text) <= 100 and text.upper() != "UNKNOWN":
        return Licence(names=(text,))
    names = {c.split("::")[-1].strip() for c in meta.get("classifiers") or []}
    names -= {"OSI Approved", ""}  # says that a licence is approved, not which
    return Licence(names=tuple(sorted(names))) if names else None


def _deb_licence(meta: dict[str, Any]) -> Licence | None:
    """The first `License:` of a machine-readable (DEP-5) copyright file; free-form files are
    prose that names no licence reliably."""
    licence = str(meta.get("license") or "").strip()
    readable = str(meta.get("format") or "").startswith("Format:")
    return Licence(names=(licence,)) if readable and licence else None


# --- the OCI artifact -------------------------------------------------------------------


def push_sbom(registry: Registry, repository_name: str, image_digest: str,
              document: Document) -> str:
    """Push `document` into the image's repository, tagged `sha256-<hex>.sbom`, as an OCI
    artifact whose subject is the image; returns the SBOM manifest's digest. The same SBOM
    pushed again costs one HEAD."""
    tag = sbom_tag(image_digest)
    image = registry.get_manifest(repository_name, image_digest)
    if image is None or image.digest != image_digest:
        raise RegistryError(f"{registry.address}/{repository_name}@{image_digest}: no such "
                            "image to attach an SBOM to")
    layer = sbom_bytes(document)
    manifest = artifact_manifest(image, SBOM_TYPE, Layer(SBOM_TYPE, content_digest(layer),
                                                         len(layer), "sbom.cdx.json"))
    if registry.manifest_digest(repository_name, tag) == manifest.digest:
        return manifest.digest
    for blob in (EMPTY_BLOB, layer):
        registry.put_blob(repository_name, blob)
    return registry.put_manifest(repository_name, tag, manifest)


def check_sbom(registry: Registry, name: str, image_digest: str) -> str | None:
    """None when the SBOM tag of `name@image_digest` holds a CycloneDX artifact about that
    image; else what is wrong, in one line."""
    if not DIGEST_RE.fullmatch(image_digest):
        return f"no SBOM can name {image_digest!r}: not a sha256 digest"
    try:
        tag = sbom_tag(image_digest)
        found = registry.get_manifest(name, tag)
        if found is None:
            return f"no SBOM: tag {tag} missing from the registry"
        return _problem(registry, name, image_digest, mapping(json.loads(found.body)))
    except RegistryError as exc:
        return f"registry: {exc}"
    except (ValueError, TypeError, AttributeError) as exc:
        return f"SBOM unreadable: {exc.__class__.__name__}: {exc}"


def _problem(registry: Registry, name: str, image_digest: str,
             manifest: Document) -> str | None:
    found = artifact_layer(manifest, SBOM_TYPE, SBOM_TYPE, image_digest)
    if isinstance(found, str):
        return f"SBOM {found}"
    document = mapping(json.loads(registry.get_blob(name, str(found.get("digest")))))
    component = mapping(mapping(document.get("metadata") or {}).get("component") or {})
    if document.get("bomFormat") != "CycloneDX":
        return "SBOM document is not CycloneDX"
    named = unquote(str(component.get("purl") or "").partition("?")[0].rpartition("@")[2])
    if named != image_digest:
        return f"SBOM document describes {named or 'no image'}, not {image_digest}"
    return None
