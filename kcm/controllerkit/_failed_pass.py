"""Logging a failed periodic pass of a timer-driven controller, as the runtime logs a failed
reconcile: the API server's answers and an unreachable server are expected, retried at the
next pass, and get one line; anything else is a bug and keeps its traceback."""

from __future__ import annotations

import logging

from kcm.runtime import error_line, is_expected_failure

__all__ = ["log_failed_pass"]


def log_failed_pass(logger: logging.Logger, what: str, error: BaseException) -> None:
    """Log that ``what`` (e.g. ``"podgc: pass"``) failed with ``error``: one ERROR line for an
    expected failure (an API error or an unreachable server, or a group of only those, as
    concurrent writes raise), the traceback for anything else."""
    if is_expected_failure(error):
        logger.error("%s failed: %s", what, error_line(error))
    else:
        logger.error("%s failed", what, exc_info=error)
