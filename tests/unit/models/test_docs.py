"""The examples in docs/models.md run (in a subprocess, so its register() calls do not leak
into the registry other tests use)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "models.md"


def test_models_doc_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    runnable = [b for b in blocks if not b.startswith("class K8sStruct")]
    assert len(runnable) >= 8
    code = "\n".join(runnable) + "\nprint('docs-ok', obj2.kind)\n"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "docs-ok Widget"
