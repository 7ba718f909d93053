"""Which failures of a reconcile (or of any pass over the cluster) are expected, and how they
read on one line.

The API server's answers, an unreachable server and a deliberate give-up are expected: they
are retried and logged as one line. Anything else is a bug and keeps its traceback. The
runtime's controllers and the timer-driven controllers (``kcm.controllerkit.log_failed_pass``)
log by the same rule.
"""

from __future__ import annotations

from kcm.errors import ApiError, TransportError

from ._reconciler import TerminalError

__all__ = ["error_line", "is_expected_failure"]

_EXPECTED = (ApiError, TransportError, TerminalError)


def is_expected_failure(error: BaseException) -> bool:
    """``error`` (or every error of a group: concurrent writes) is an API error, an
    unreachable server or a :class:`TerminalError`."""
    if isinstance(error, BaseExceptionGroup):
        return all(is_expected_failure(e) for e in error.exceptions)
    return isinstance(error, _EXPECTED)


def error_line(error: BaseException) -> str:
    """The error's message on one line (a group's messages joined with ``; ``; the type's
    name when the message is empty)."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(error_line(e) for e in error.exceptions)
    return " ".join((str(error) or type(error).__name__).split())
