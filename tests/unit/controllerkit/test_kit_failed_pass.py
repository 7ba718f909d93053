"""A failed periodic pass is logged as one line when the API said no or could not be reached,
with its traceback when it is a bug."""

from __future__ import annotations

import logging

import pytest

from kcm.controllerkit import log_failed_pass
from kcm.errors import ConnectionFailed, NotFound

logger = logging.getLogger("tests.failed_pass")


def _logged(caplog: pytest.LogCaptureFixture, error: BaseException) -> logging.LogRecord:
    with caplog.at_level(logging.ERROR, logger=logger.name):
        log_failed_pass(logger, "podgc: pass", error)
    [record] = caplog.records
    return record


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (NotFound('pods "a" not found'), 'podgc: pass failed: pods "a" not found'),
        (
            ConnectionFailed("cannot reach\nthe server", server="https://h"),
            "podgc: pass failed: cannot reach the server",
        ),
        (
            ExceptionGroup("writes", [NotFound("one"), ConnectionFailed("two")]),
            "podgc: pass failed: one; two",
        ),
    ],
)
def test_an_expected_failure_is_one_line(
    caplog: pytest.LogCaptureFixture, error: BaseException, line: str
) -> None:
    record = _logged(caplog, error)
    assert record.getMessage().startswith(line)
    assert record.exc_info is None
    assert "\n" not in record.getMessage()


@pytest.mark.parametrize(
    "error", [ValueError("a bug"), ExceptionGroup("writes", [NotFound("one"), KeyError("k")])]
)
def test_a_bug_keeps_its_traceback(caplog: pytest.LogCaptureFixture, error: BaseException) -> None:
    record = _logged(caplog, error)
    assert record.getMessage() == "podgc: pass failed"
    assert record.exc_info is not None
    assert record.exc_info[1] is error
