"""docs/architecture.md shows the layering rule as the import-linter contracts state it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_page_renders_the_current_contracts() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_layers.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
