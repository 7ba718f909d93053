"""Scenarios where kcm's controllers end in a different state from the recorded Go
kube-controller-manager: deliberately (``KEPT_DIFFERENT``, each with the reason: kcm follows
newer Kubernetes than the 1.24 recording in places), or not yet (``not_yet_matching.txt``,
rewritten by ``python -m tests.differential.report --write-not-yet``). The test expects every
kept scenario to differ (strict xfail); a not-yet one may match (timing can make it match in one
run and not the next), and then passes."""

from __future__ import annotations

from pathlib import Path

KEPT_DIFFERENT: dict[str, str] = {}

NOT_YET_FILE = Path(__file__).with_name("not_yet_matching.txt")


def _read() -> frozenset[str]:
    if not NOT_YET_FILE.exists():
        return frozenset()
    lines = (line.strip() for line in NOT_YET_FILE.read_text().splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


NOT_YET_MATCHING = _read()
