"""The project's templates as Jinja sees them: loaded only from the project's folders, and
each mistake in one (syntax, a missing include, an error as it renders) as `file:line`."""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from pathlib import Path

import jinja2
from jinja2.loaders import split_template_path

from ngc_builder.errors import Problem
from ngc_builder.files import INPUT_LIMIT, read_regular
from ngc_builder.manifest.paths import PROJECT_FOLDERS


class OutsideProject(jinja2.TemplateNotFound):
    """A template named outside the project's folders: refused at the line naming it (or,
    for the image's own template, at the file itself: `shown`)."""

    def __init__(self, name: str, message: str, shown: str | None = None) -> None:
        super().__init__(name, message)
        self.shown = shown


class ProjectLoader(jinja2.FileSystemLoader):
    """Templates from the project; one that is not UTF-8 is a template error at its line."""

    def get_source(self, environment: jinja2.Environment,
                   template: str) -> tuple[str, str, Callable[[], bool]]:
        # Only the project's own folders: what a no-op re-run's fingerprint covers.
        templates, root = (Path(folder) for folder in self.searchpath)
        if template.split("/", 1)[0] not in PROJECT_FOLDERS and \
                not (templates / template).is_file() and (root / template).exists():
            raise OutsideProject(template, f"{template}: not in the project's "
                                 f"{', '.join(PROJECT_FOLDERS)}")
        path = self._found(template)
        data = read_regular(path, INPUT_LIMIT)  # never a FIFO, a device or without end
        try:
            source = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise jinja2.TemplateSyntaxError("not UTF-8 text", line, template,
                                             str(path)) from None
        mtime = path.stat().st_mtime
        return source, str(path), lambda: path.stat().st_mtime == mtime

    def _found(self, template: str) -> Path:
        """The first search folder's file of that name; a link may not lead out of the
        folder it stands in (a folder that is itself a link is the project's to make)."""
        parts = split_template_path(template)
        for folder in self.searchpath:
            path = Path(folder).joinpath(*parts)
            if not os.path.lexists(path):
                continue
            if not path.resolve().is_relative_to(path.parent.resolve()):
                shown = f"{Path(folder).name}/{template}" if folder == self.searchpath[0] \
                    else template
                raise OutsideProject(template, f"a link to a file outside "
                                     f"{path.parent.name}/: not followed", shown)
            return path
        raise jinja2.TemplateNotFound(template)


def environment(root: Path) -> jinja2.Environment:
    loader = ProjectLoader([str(root / "templates"), str(root)])
    return jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, autoescape=False,
                              trim_blocks=True, lstrip_blocks=True)


# What a template's own expressions can raise while it renders (`{{ 1 // 0 }}`, `{{ "a" + 1
# }}`, a missing key), besides Jinja's own errors: each is the template's mistake.
TEMPLATE_ERRORS = (jinja2.TemplateError, ArithmeticError, TypeError, ValueError, LookupError,
                   AttributeError)


def template_problem(exc: Exception, root: Path, image: str) -> Problem:
    """A template mistake as `file:line: template: message`, whatever kind it is."""
    if isinstance(exc, jinja2.TemplateNotFound) and not isinstance(exc, OutsideProject):
        return Problem(f"templates/{exc.name}", 1, "template", f"not found (image {image})")
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return Problem(_shown(exc.filename, root), exc.lineno, "template", exc.message or "")
    # Runtime errors (an undefined name) carry their place only in the traceback, which
    # Jinja rewrites to point into the template file.
    message = (exc.message if isinstance(exc, jinja2.TemplateError) else None) or \
        f"{exc.__class__.__name__}: {exc}"
    for frame, line in reversed(list(traceback.walk_tb(exc.__traceback__))):
        if frame.f_code.co_filename.endswith(".j2"):
            return Problem(_shown(frame.f_code.co_filename, root), line, "template", message)
    where = exc.shown if isinstance(exc, OutsideProject) and exc.shown else None
    return Problem(where or f"(template of {image})", 1, "template", message)


def _shown(filename: str | None, root: Path) -> str:
    if filename is None:
        return "(template)"
    try:
        return str(Path(filename).resolve().relative_to(root.resolve()))
    except ValueError:
        return filename
