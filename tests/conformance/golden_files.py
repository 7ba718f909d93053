"""Reading and writing the golden outcomes (``golden/<area>.json``: scenario id -> outcomes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["GOLDEN_DIR", "load_golden", "save_golden"]

GOLDEN_DIR = Path(__file__).parent / "golden"


def load_golden(area: str) -> dict[str, Any]:
    path = GOLDEN_DIR / f"{area}.json"
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def save_golden(area: str, outcomes: dict[str, Any]) -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    text = json.dumps(dict(sorted(outcomes.items())), indent=1, sort_keys=True)
    (GOLDEN_DIR / f"{area}.json").write_text(text + "\n")
