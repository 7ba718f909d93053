"""Every scenario, by controller (one module per controller, found by name)."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from ..scenario import Scenario

AREAS = tuple(sorted(p.stem for p in Path(__file__).parent.glob("[a-z]*.py")))


def all_scenarios() -> list[Scenario]:
    found: list[Scenario] = []
    for area in AREAS:
        for scenario in import_module(f"{__name__}.{area}").SCENARIOS:
            assert scenario.area == area, f"{scenario.id} is in scenarios/{area}.py"
            found.append(scenario)
    ids = [s.id for s in found]
    assert len(ids) == len(set(ids)), "duplicate scenario ids"
    return found
