"""Replay every scenario against the embedded API server and compare with the outcomes a real
kube-apiserver gave (``golden/``; re-record with ``python -m tests.conformance.record``)."""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from .differences import KEPT_DIFFERENT, NOT_YET_MATCHING
from .golden_files import load_golden
from .runner import (
    ADMIN_TOKEN,
    Target,
    embedded_server,
    run_scenario,
    write_embedded_kubeconfig,
)
from .scenario import Kubectl, Scenario
from .scenarios import all_scenarios

SCENARIOS = all_scenarios()


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """One embedded server for the module, served from a background thread (scenarios use
    namespaces and object names of their own)."""
    with start_blocking_portal("asyncio") as portal:
        directory = tmp_path_factory.mktemp("conformance")
        server = embedded_server(directory)
        with portal.wrap_async_context_manager(server):
            path = directory / "kubeconfig"
            write_embedded_kubeconfig(server, path)
            yield Target(server.url, path, ADMIN_TOKEN)


def _diff(expected: Any, actual: Any) -> str:
    return "\n".join(
        [
            "expected (kube-apiserver):",
            json.dumps(expected, indent=1, sort_keys=True),
            "actual (embedded):",
            json.dumps(actual, indent=1, sort_keys=True),
        ]
    )


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_matches_kube_apiserver(target: Target, scenario: Scenario) -> None:
    golden = load_golden(scenario.area)
    assert scenario.id in golden, (
        f"{scenario.id} has no recording: run python -m tests.conformance.record "
        f"--kubeconfig <real cluster> --only {scenario.id}"
    )
    if any(isinstance(s, Kubectl) for s in scenario.steps) and shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    reason = KEPT_DIFFERENT.get(scenario.id)
    if reason is None and scenario.id in NOT_YET_MATCHING:
        reason = "not yet matching (tests/conformance/not_yet_matching.txt)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcomes = run_scenario(target, scenario)
    expected = golden[scenario.id]
    if reason is not None:
        assert outcomes != expected, (
            f"{scenario.id} now matches: take it off KEPT_DIFFERENT / not_yet_matching.txt"
        )
        pytest.xfail(reason)
    for number, (want, got) in enumerate(zip(expected, outcomes, strict=True), 1):
        assert got == want, f"step {number} of {scenario.id}: {scenario.doc}\n" + _diff(want, got)


def test_every_recording_has_a_scenario() -> None:
    """A renamed or deleted scenario must not leave its old recording behind."""
    known = {s.id for s in SCENARIOS}
    for path in sorted(Path(__file__).parent.joinpath("golden").glob("*.json")):
        stale = set(load_golden(path.stem)) - known
        assert not stale, f"{path.name} has recordings of no scenario: {sorted(stale)}"
    assert set(KEPT_DIFFERENT) <= known, set(KEPT_DIFFERENT) - known
    assert known >= NOT_YET_MATCHING, NOT_YET_MATCHING - known
