"""Retries for what a network hiccup breaks: registry calls, pushes and pulls. Bounded, with
exponential backoff, each retry said with its reason; only transient failures (a connection
lost or refused, HTTP 429 or 5xx) are retried, never another 4xx or a missing host.

Tuning for slow or flaky links: NGC_RETRIES (attempts, default 5) and NGC_RETRY_WAIT (first
wait in seconds, default 1; it doubles up to 20 s).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import tenacity

from ngc_builder.services.environment import setting_float, setting_int

T = TypeVar("T")
TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
# How a transient failure reads inside an engine stream or an exception's text.
TRANSIENT_TEXT = re.compile(
    r"\b(429|50[0234])\b|too many requests|service unavailable|bad gateway|gateway time"
    r"|connection (reset|refused|aborted)|broken pipe|unexpected EOF|\bEOF\b|timed? ?out",
    re.IGNORECASE)


def _to_stderr(text: str) -> None:
    print(f"retry: {text}", file=sys.stderr)


def transient_text(error: BaseException) -> bool:
    return bool(TRANSIENT_TEXT.search(str(error)))


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    first_wait: float = 1.0
    max_wait: float = 20.0
    say: Callable[[str], None] = field(default=_to_stderr, compare=False)

    @classmethod
    def from_env(cls, say: Callable[[str], None] = _to_stderr) -> RetryPolicy:
        attempts = setting_int("NGC_RETRIES", 5)
        wait = setting_float("NGC_RETRY_WAIT", 1.0)
        return cls(max(1, attempts), max(0.0, wait), say=say)

    def saying(self, say: Callable[[str], None]) -> RetryPolicy:
        return RetryPolicy(self.attempts, self.first_wait, self.max_wait, say)

    def call(self, what: str, action: Callable[[], T],
             transient: Callable[[BaseException], bool] = transient_text) -> T:
        """`action()`, again after a transient failure; the last failure is raised as it is."""
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.attempts),
            wait=tenacity.wait_exponential(multiplier=self.first_wait, max=self.max_wait),
            retry=tenacity.retry_if_exception(transient),
            before_sleep=lambda state: self._said(what, state), reraise=True)
        return retrying(action)

    def _said(self, what: str, state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        self.say(f"{what}: attempt {state.attempt_number} of {self.attempts} failed ({error}); "
                 f"again in {wait:.1f} s")
