"""What changed between two locks of an image, as a reviewer reads it: `numpy 2.3.4 -> 2.3.5`,
`+ml-dtypes 0.6.0`, `-six 1.17.0`; Debian packages marked `deb:`."""

from __future__ import annotations

from ngc_builder.lock.models import ImageLock, ReleaseLock


def versions(image: ImageLock | None) -> dict[str, str]:
    if image is None:
        return {}
    return {**{p.name: p.version for p in image.pip},
            **{f"deb:{p.name}": p.version for p in image.apt}}


def package_changes(old: ImageLock | None, new: ImageLock | None) -> list[str]:
    return changed_versions(versions(old), versions(new))


def changed_versions(before: dict[str, str], after: dict[str, str]) -> list[str]:
    changes = [f"{name} {before[name]} -> {after[name]}" for name in sorted(before)
               if name in after and before[name] != after[name]]
    changes += [f"+{name} {after[name]}" for name in sorted(set(after) - set(before))]
    changes += [f"-{name} {before[name]}" for name in sorted(set(before) - set(after))]
    return changes


def release_changes(old: ReleaseLock | None, new: ReleaseLock) -> dict[str, list[str]]:
    """Per image of `new`, its changes against `old` (images without changes left out)."""
    found = {name: package_changes(old.for_image(name) if old else None, image)
             for name, image in sorted(new.images.items())}
    return {name: changes for name, changes in found.items() if changes}


def platform_changes(old: ReleaseLock | None,
                     new: ReleaseLock) -> dict[str, dict[str, list[str]]]:
    """Per other platform of `new`, per image, its changes against `old`'s same platform."""
    found: dict[str, dict[str, list[str]]] = {}
    for platform, closure in sorted(new.platforms.items()):
        before = old.of_platform(platform).images if old else {}
        changes = {name: package_changes(before.get(name), image)
                   for name, image in sorted(closure.images.items())}
        found[platform] = {name: listed for name, listed in changes.items() if listed}
    return {platform: images for platform, images in found.items() if images}


def summary(changes: list[str], limit: int = 6) -> str:
    shown = ", ".join(changes[:limit])
    more = len(changes) - limit
    return f"{shown} and {more} more" if more > 0 else shown
