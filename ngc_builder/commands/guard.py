"""Exit codes, and the guard every command runs in: the errors users cause or meet become one
line each and an exit code, never a traceback.

0 success, 1 a failed image or check, 2 bad input.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from ngc_builder.errors import EngineError, InputError, StepError

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2


def guarded(action: Callable[[], int]) -> int:
    """Run a command; turn the errors users cause or meet into lines and exit codes."""
    try:
        return action()
    except InputError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return EXIT_INPUT
    except (StepError, EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted: the release record keeps what was finished", file=sys.stderr)
        return 130
    except Exception as exc:
        # A bug of ours, not the user's input: one line by default, the traceback on demand.
        if os.environ.get("NGC_DEBUG") == "1":
            raise
        print(f"internal error: {exc.__class__.__name__}: {exc} (NGC_DEBUG=1 shows where)",
              file=sys.stderr)
        return EXIT_FAILED
