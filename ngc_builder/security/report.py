"""What the security scan found, said three ways: a line per fixed source package, JSON for
tools (every binary package), and Markdown for the patch release's merge request and notes
(each source package with the CVEs its new changelog entries name, and the images that hold
it)."""

from __future__ import annotations

import json
from itertools import groupby

from ngc_builder.security.scan import Update

SHOWN_CVES = 8  # on a terminal line; JSON and Markdown list them all


def by_source(found: list[Update]) -> list[list[Update]]:
    """The updates of one source package's one new version in one suite, together."""
    def key(update: Update) -> tuple[str, str, str]:
        return update.held.codename, update.fixed.source, update.fixed.version
    return [list(group) for _key, group in groupby(sorted(found, key=key), key)]


def cves_of(group: list[Update]) -> list[str]:
    return list(dict.fromkeys(cve for update in group for cve in update.cves))


def named(group: list[Update], limit: int | None = None) -> str:
    """The CVEs, or why there are none to show."""
    unread = next((update.unread for update in group if update.unread), None)
    if unread is not None:
        return f"CVEs unknown: {unread}"
    cves = cves_of(group)
    if not cves:
        return "no CVE named in its changelog"
    shown = cves if limit is None or len(cves) <= limit else [
        *cves[:limit], f"and {len(cves) - limit} more"]
    return f"{len(cves)} CVE(s): {', '.join(shown)}"


def _facts(group: list[Update]) -> tuple[str, str, str, str]:
    """(locked versions, binaries with their architectures, where held, suite)."""
    locked = " / ".join(sorted({update.held.version for update in group}))
    binaries = ", ".join(f"{u.held.name}:{u.held.arch}" for u in group)
    where = ", ".join(sorted({place for u in group for place in u.held.where}))
    return locked, binaries, where, group[0].held.codename


def fixed_line(group: list[Update]) -> str:
    locked, binaries, where, codename = _facts(group)
    fixed = group[0].fixed
    return (f"{fixed.source} {locked} -> {fixed.version} ({codename}; {binaries}): "
            f"{named(group, SHOWN_CVES)}; in {where}")


def summary(found: list[Update]) -> str:
    if not found:
        return "security: every locked .deb is the newest its security suite has"
    cves = {cve for update in found for cve in update.cves}
    return (f"security: {len(found)} locked .deb(s) of {len(by_source(found))} source "
            f"package(s) have fixes in the security suite, naming {len(cves)} CVE(s)")


def to_json(found: list[Update]) -> str:
    return json.dumps({"updates": [{
        "name": update.held.name, "arch": update.held.arch, "suite": update.held.codename,
        "locked": update.held.version, "fixed": update.fixed.version,
        "source": update.fixed.source, "file": update.fixed.file,
        "sha256": update.fixed.sha256, "cves": list(update.cves),
        "entries": [entry.version for entry in update.entries], "unread": update.unread,
        "in": list(update.held.where)} for update in found]}, indent=2)


def markdown(found: list[Update], release: str) -> str:
    lines = [f"# Security fixes for {release}", "", summary(found).removeprefix("security: ")
             + ".", ""]
    if found:
        lines += ["| Source | Locked | Fixed | Suite | Binaries | CVEs | In |",
                  "|---|---|---|---|---|---|---|"]
        for group in by_source(found):
            locked, binaries, where, codename = _facts(group)
            lines.append(f"| {group[0].fixed.source} | {locked} | {group[0].fixed.version} | "
                         f"{codename} | {binaries} | {named(group)} | {where} |")
    return "\n".join(lines) + "\n"
