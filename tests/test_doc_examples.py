"""Every ```python example in docs/ and docs/how-to/ runs as it is, and its assertions hold.

A ```python block is a whole program (imports included, run against the embedded API server);
a fragment that needs a surrounding program or a real cluster is fenced ```py instead.
``docs/models.md`` runs its blocks as one program in a subprocess
(``tests/unit/models/test_docs.py``) and ``docs/simulation.md``'s example has a test of its
own (``tests/integration/simulation/test_sim_docs_example.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
RUN_ELSEWHERE = {"models.md", "simulation.md"}
PAGES = sorted([*DOCS.glob("*.md"), *DOCS.glob("how-to/*.md")])
EXAMPLES = [
    pytest.param(doc, source, id=f"{doc.relative_to(DOCS).with_suffix('')}-{number}")
    for doc in PAGES
    if doc.name not in RUN_ELSEWHERE
    for number, source in enumerate(re.findall(r"```python\n(.*?)```", doc.read_text(), re.S))
]


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) >= 17


@pytest.mark.parametrize(("doc", "source"), EXAMPLES)
def test_example_runs(doc: Path, source: str) -> None:
    exec(compile(source, str(doc), "exec"), {"__name__": "__doc_example__"})
