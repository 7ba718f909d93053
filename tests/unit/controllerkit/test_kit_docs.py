"""Every ```python example in docs/controllerkit.md runs and its assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "controllerkit.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_doc_has_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("source", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_example_runs(source: str) -> None:
    exec(compile(source, str(DOC), "exec"), {"__name__": "__doc_example__"})
