"""What a person sees: live step and log lines (rich) and the closing summary table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ngc_builder.errors import message_line, os_problem
from ngc_builder.records.record import ImageRecord, ReleaseRecord
from ngc_builder.redact import escape_controls, strip_userinfo

GB = 1_000_000_000
DIGEST_WIDTH = len("sha256:") + 64


class Ui:
    """Progress to stderr (stdout stays clean for --json); every log line also to a file."""

    def __init__(
        self, log_dir: Path, show_logs: bool = True, stream: TextIO | None = None
    ) -> None:
        target = stream or sys.stderr
        # Off a terminal (CI logs) rich would wrap at 80 columns and split log lines.
        width = None if target.isatty() else 160
        self.console = plain_console(target, width)
        self.log_dir = log_dir
        self.show_logs = show_logs
        self._files: dict[str, TextIO] = {}
        self.positions: dict[str, str] = {}
        self.muted = False  # set when a run stops: the workers' last words would mislead
        self._lost: set[str] = set()  # images whose log could not be written

    def mute(self) -> None:
        self.muted = True

    def plan(self, images: list[str]) -> None:
        """Number the images, so every step line says how far the run has come."""
        self.positions = {name: f"[{i}/{len(images)}] " for i, name in enumerate(images, 1)}

    def step(self, image: str, message: str, always: bool = False) -> None:
        if self.muted and not always:
            return
        message = message_line(message)  # one line, on the console and in the log
        where = self.positions.get(image, "")
        self.console.print(Text.assemble((f"==> {where}{image}: ", "bold cyan"), message),
                           soft_wrap=True)
        self._write(image, f"==> {message}")

    def problem(self, image: str, message: str, always: bool = False) -> None:
        if self.muted and not always:
            return
        message = message_line(message)
        # One problem, one line, however long: CI logs and greps read it whole.
        self.console.print(Text.assemble((f"!!! {image}: ", "bold red"), message),
                           soft_wrap=True)
        self._write(image, f"!!! {message}")

    def sink(self, image: str) -> LineWriter:
        return LineWriter(self, image)

    def line(self, image: str, text: str) -> None:
        # Build and push output may echo an index URL, and a build's own escape sequences
        # (a progress bar's CR, a title) would reach the terminal and the image's log.
        text = escape_controls(strip_userinfo(text), keep="\t")
        if self.show_logs and not self.muted:
            self.console.print(Text(f"    {image} | {text}", style="dim"), soft_wrap=True)
        self._write(image, text)

    def log_path(self, image: str) -> Path:
        return self.log_dir / f"{image}.log"

    def _write(self, image: str, text: str) -> None:
        if image in self._lost:
            return
        try:
            if image not in self._files:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                self._files[image] = self.log_path(image).open("a", encoding="utf-8")
            self._files[image].write(text + "\n")
            self._files[image].flush()
        except OSError as exc:
            # A full disk stops the log, not the build: said once, on the console only.
            self._lost.add(image)
            self.console.print(Text.assemble((f"!!! {image}: ", "bold red"),
                                             f"log: {os_problem(exc)} (the log stops here)"),
                               soft_wrap=True)

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()


def plain_console(target: TextIO, width: int | None = None) -> Console:
    """A rich console that writes no escape sequence (no colour, no style): every command's
    output passes through RedactedStream, which writes any control character as its escape,
    so a colour would show as `\\x1b[1;36m`. Tables and wrapping stay."""
    return Console(file=target, highlight=False, width=width, color_system=None)


class LineWriter:
    """A LineSink bound to one image."""

    def __init__(self, ui: Ui, image: str) -> None:
        self.ui = ui
        self.image = image

    def __call__(self, text: str) -> None:
        self.ui.line(self.image, text)


def print_summary(record: ReleaseRecord, images: list[ImageRecord],
                  stream: TextIO | None = None) -> None:
    """The table on a terminal; off one (CI logs, no TTY, 80 columns) one whole line per
    image, since a table squeezed into 80 columns wraps into cells one word wide."""
    target = stream or sys.stdout
    if target.isatty():
        plain_console(target).print(summary_table(record, images))
        return
    print(f"release {record.release} -> {strip_userinfo(record.registry)}", file=target)
    for image in images:
        print(summary_line(image), file=target)


def summary_line(image: ImageRecord) -> str:
    """One image's row as `name: build | validation | push | size`, never wrapped."""
    cells = (_build_cell(image), _validation_cell(image), _push_cell(image), _size_cell(image))
    return f"{image.name}: " + " | ".join(" ".join(cell.split()) for cell in cells)


def summary_table(record: ReleaseRecord, images: list[ImageRecord]) -> Table:
    table = Table(title=f"release {record.release} -> {record.registry}")
    for column in ("image", "build", "validation"):
        table.add_column(column)
    # The whole digest, folded rather than cut with an ellipsis: a cut one cannot be pulled.
    table.add_column("pushed digest", overflow="fold", min_width=DIGEST_WIDTH)
    table.add_column("size")
    for image in images:
        table.add_row(image.name, _build_cell(image), _validation_cell(image),
                      _push_cell(image), _size_cell(image))
    return table


def _build_cell(image: ImageRecord) -> str:
    if image.outcome == "xfail":
        return f"expected failure: {image.build.error or image.validation.error or ''}"[:120]
    build = image.build
    if build.status == "ok" and build.reused:
        return "reused"
    if build.status == "ok":
        return f"built {build.seconds:.0f}s" if build.seconds is not None else "built"
    return f"{build.status}" + (f": {build.error}" if build.error else "")


def _validation_cell(image: ImageRecord) -> str:
    check = image.validation
    if check.verdict is None:
        return check.status + (f": {check.error}" if check.error else "")
    counts = " ".join(f"{n} {k}" for k, n in check.summary.items() if n)
    failed = f" [{', '.join(check.failed_checks)}]" if check.failed_checks else ""
    return f"{check.verdict} ({counts}){failed}"


def _push_cell(image: ImageRecord) -> str:
    push = image.push
    if push.status == "ok" and push.digest:
        return push.digest + (" (already there)" if push.reused else "")
    return push.status + (f": {push.error}" if push.error else "")


def _size_cell(image: ImageRecord) -> str:
    size = image.build.size_bytes
    return f"{size / GB:.2f} GB" if size else "-"
