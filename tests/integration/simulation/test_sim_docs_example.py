"""docs/simulation.md's Python example runs as written (in a subprocess, as a user would)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "simulation.md"


def test_simulation_doc_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, "docs/simulation.md lost its Python example"
    out = subprocess.run(
        [sys.executable, "-c", blocks[0]], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "kcm-node-1 Running"
