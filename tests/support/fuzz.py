"""Budget and time bound shared by the parser fuzz tests.

``make test`` runs each fuzz test on 500 inputs; ``make soak`` sets ``HUDI_CLUSTER_FUZZ_EXAMPLES=10000``. Every
input must end within :data:`SECONDS_PER_INPUT`: a parser that loops on bad bytes fails the test by name instead
of hanging the suite.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("HUDI_CLUSTER_FUZZ_EXAMPLES", "500"))
SECONDS_PER_INPUT = 2.0

fuzz = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

T = TypeVar("T")


class ParserHang(AssertionError):
    pass


@contextmanager
def bounded(seconds: float = SECONDS_PER_INPUT) -> Iterator[None]:
    """Fail with :class:`ParserHang` when the block runs longer than ``seconds`` (main thread only)."""

    def expire(signum, frame):
        raise ParserHang(f"a parser ran over {seconds} s on one input")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def outcome(parse: Callable[[], T], *errors: type[BaseException]) -> T | BaseException:
    """The parse's result, or the named error it raised; any other exception (or a hang) fails the test."""
    with bounded():
        try:
            return parse()
        except errors as error:
            return error
