"""The builder's typing catches wiring mistakes: mypy --strict on a snippet (msgspec style)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

SNIPPET = textwrap.dedent(
    """
    from kcm.informers import SharedInformerFactory
    from kcm.models import ObjectKey
    from kcm.models.core_v1 import ConfigMap, Secret
    from kcm.runtime import (
        PredicateFuncs, Request, Result, controller_for, enqueue_mapped, generation_changed,
    )


    class WrongKey:
        async def reconcile(self, request: str) -> Result:
            return Result()


    class Good:
        async def reconcile(self, request: Request) -> Result:
            return Result()


    def wire(factory: SharedInformerFactory) -> None:
        controller_for(factory, ConfigMap, predicates=[PredicateFuncs[Secret]()])  # E
        controller_for(factory, ConfigMap).build(WrongKey())  # E
        controller_for(factory, ConfigMap).watches(
            Secret, enqueue_mapped(lambda o: [o.metadata.name])  # E
        )
        (
            controller_for(factory, ConfigMap, predicates=[generation_changed()])
            .owns(Secret)
            .watches(Secret, enqueue_mapped(lambda o: [ObjectKey("", o.metadata.name or "")]))
            .build(Good())
        )
    """
)


@pytest.mark.slow
def test_wiring_mistakes_are_type_errors(tmp_path: Path) -> None:
    source = tmp_path / "wiring.py"
    source.write_text(SNIPPET)
    out, err, _ = mypy_api.run(
        ["--strict", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(source)]
    )
    error_lines = sorted(
        {int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line}
    )
    expected = [n for n, text in enumerate(SNIPPET.splitlines(), 1) if text.endswith("# E")]
    assert error_lines == expected, out + err
