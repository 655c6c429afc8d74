"""The notes' "SquashFS" section: for each image whose row asked for it, the SquashFS of each
platform beside it in the registry, its size, and how a node starts from it (docs/squashfs.md)."""

from __future__ import annotations

from ngc_builder.records.record import ReleaseRecord

GB = 1_000_000_000


def squashfs_lines(record: ReleaseRecord) -> list[str]:
    lines = []
    for name, image in record.images.items():
        made = [f"{entry.platform} `{record.registry}/{name}:{entry.tag}` "
                f"({entry.size / GB:.2f} GB)" for entry in image.push.squashfs]
        if made and image.push.digest:
            lines.append(f"- {name}: {', '.join(made)}")
    if not lines:
        return []
    first = next(name for name, image in record.images.items() if image.push.squashfs)
    key = f"{record.release}.cosign.pub"
    return ["## SquashFS", "", *lines,
            "- Each is the image's root filesystem for `ch-run` to start straight from one "
            "file (no pull, no unpacking on the node), an OCI artifact whose subject is the "
            "platform's manifest, signed with the image.",
            f"- Start one: `ngc-builder squashfs {record.registry}/{first}:{record.release}-py3 "
            f"--key {key} -- python train.py` (checks both signatures and the file's digest, "
            "keeps it in a cache by digest); docs/squashfs.md has the Slurm script.", ""]
