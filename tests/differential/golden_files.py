"""Golden snapshots: ``golden/<controller>.json``, scenario id -> snapshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOLDEN_DIR = Path(__file__).parent / "golden"


def load_golden(area: str) -> dict[str, Any]:
    path = GOLDEN_DIR / f"{area}.json"
    return json.loads(path.read_text()) if path.exists() else {}  # type: ignore[no-any-return]


def save_golden(area: str, recorded: dict[str, Any]) -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    text = json.dumps(dict(sorted(recorded.items())), indent=1, sort_keys=True)
    (GOLDEN_DIR / f"{area}.json").write_text(text + "\n")
