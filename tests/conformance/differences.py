"""Scenarios the embedded server does not match (yet, or on purpose).

``KEPT_DIFFERENT``: differences kept deliberately, each with the reason.
``NOT_YET_MATCHING`` (read from ``not_yet_matching.txt``): scenarios that still differ and are
work to do; ``python -m tests.conformance.report --write-not-yet`` rewrites the file from a
run. The test expects every listed scenario to differ (strict xfail), so a scenario that starts
matching must come off the list, and a matching one can never silently regress.
"""

from __future__ import annotations

from pathlib import Path

KEPT_DIFFERENT: dict[str, str] = {}

NOT_YET_FILE = Path(__file__).with_name("not_yet_matching.txt")


def _read_not_yet() -> frozenset[str]:
    if not NOT_YET_FILE.exists():
        return frozenset()
    lines = (line.strip() for line in NOT_YET_FILE.read_text().splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


NOT_YET_MATCHING = _read_not_yet()
