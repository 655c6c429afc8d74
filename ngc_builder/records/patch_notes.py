"""A patch release's part of its notes (docs/security.md): the fixes it was made for, as
`ngc-builder security --patch` wrote them beside its manifest (each source package with the
CVEs its changelog names), and where the monthly tag points: the release engineer chose it in
the manifest (`aliases`), and the notes say which way."""

from __future__ import annotations

from ngc_builder.files import INPUT_LIMIT, read_text
from ngc_builder.manifest.load import LoadedRelease


def security_lines(loaded: LoadedRelease) -> list[str]:
    release = loaded.release
    if release.patch is None:
        return []
    monthly, patched = f"{release.release}-py3", f"{release.release_id}-py3"
    if monthly in release.aliases:
        where = (f"`{monthly}` follows it: the manifest lists `{monthly}` among its aliases, so "
                 "that tag moved to these images with the patch's own")
    else:
        where = (f"`{monthly}` stays on the {release.release} images; `{patched}` names the "
                 "patched ones")
    lines = ["## Security fixes", "",
             f"Patch {release.patch} of {release.release}: the same images with the fixed "
             f"Debian packages below, built again where they hold one. {where}.", ""]
    report = loaded.manifest.with_suffix(".security.md")
    if not report.is_file():
        return [*lines, f"(no `{report.name}` beside the manifest: its fixes are not listed)", ""]
    body = [line for line in read_text(report, INPUT_LIMIT).splitlines()
            if not line.startswith("# ")]
    return [*lines, *"\n".join(body).strip("\n").splitlines(), ""]
