"""Every scenario, by area (one module per area)."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from ..scenario import Scenario

AREAS = tuple(sorted(p.stem for p in Path(__file__).parent.glob("[a-z]*.py")))
"""One module per area (``scenarios/<area>.py`` defining ``SCENARIOS``), found by name."""


def all_scenarios() -> list[Scenario]:
    """Every scenario of every area, in area order; ids are checked to be unique."""
    found: list[Scenario] = []
    for area in AREAS:
        module = import_module(f"{__name__}.{area}")
        for scenario in module.SCENARIOS:
            assert scenario.area == area, f"{scenario.id} is in scenarios/{area}.py"
            found.append(scenario)
    ids = [s.id for s in found]
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, f"duplicate scenario ids: {sorted(duplicates)}"
    return found
