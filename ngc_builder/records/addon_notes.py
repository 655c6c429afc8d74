"""The notes' "NVIDIA add-ons" section: what each image carries beside its framework (the
manifest's `addons`, each checked by the image's `addons.*` probes) and what NGC's image has
that this one cannot, with the reason (`unavailable_addons`)."""

from __future__ import annotations

from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.records.matrix import one_line
from ngc_builder.records.record import ReleaseRecord

CHECKED = ("- Each add-on is held by the image's `addons.*` checks to the manifest's version, "
           "imported, and run once on the CPU; the GPU operation, where the library has one, "
           "runs when the image is validated with GPUs (docs/addons.md).")


def addon_lines(loaded: LoadedRelease, record: ReleaseRecord) -> list[str]:
    lines: list[str] = []
    for entry in loaded.release.images:
        name = entry.image_name
        image = record.images.get(name)
        if entry.addons and image is not None:
            carried = ", ".join(f"{addon} {version}" for addon, version
                                in sorted(entry.addons.items()))
            gpu = ("GPU operations run" if image.validation.gpu_mode == "required"
                   else "GPU operations skipped: no GPU")
            lines.append(f"- {name}: {carried} ({image.validation.verdict or 'not validated'}; "
                         f"{gpu})")
        lines += [f"- {name}: no {addon}: {one_line(reason)}"
                  for addon, reason in sorted(entry.unavailable_addons.items())]
    return ["## NVIDIA add-ons", "", *lines, CHECKED, ""] if lines else []
