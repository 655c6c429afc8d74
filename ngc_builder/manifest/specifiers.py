"""What a release row's `track:` admits (the monthly bump's range of framework versions)."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet


def track_specifier(text: str) -> SpecifierSet | None:
    """What a row's `track:` admits: None for `latest` (any version); a bare version or
    wildcard (`2.15.*`, `2.15.1`) is an `==`; anything else is a PEP 440 specifier (`~=2.15`)."""
    if text == "latest":
        return None
    return SpecifierSet(f"=={text}" if text[:1].isdigit() else text)
