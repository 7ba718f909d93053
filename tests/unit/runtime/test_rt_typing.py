"""The builder's typing catches wiring mistakes: mypy --strict on a snippet (msgspec style)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

SNIPPET = textwrap.dedent(
    """
    from kcm.informers import SharedInformerFactory
    from kcm.models import ObjectKey, PartialObjectMetadata, ResourceInfo, Unstructured
    from kcm.models.core_v1 import ConfigMap, Secret
    from kcm.runtime import (
        Manager, PredicateFuncs, Request, Result, controller_for, enqueue_mapped,
        generation_changed,
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


    secret_only = [PredicateFuncs[Secret]()]


    def wire_sources(factory: SharedInformerFactory, info: ResourceInfo) -> None:
        b = controller_for(factory, ConfigMap)
        b.owns(Secret, metadata_only=True, predicates=[PredicateFuncs[Secret]()])  # E
        b.owns(Secret, metadata_only=True, predicates=[PredicateFuncs[PartialObjectMetadata]()])
        b.owns(Secret, predicates=[PredicateFuncs[PartialObjectMetadata]()])  # E
        b.owns(info, predicates=[PredicateFuncs[Unstructured]()])
        b.owns(info, predicates=[PredicateFuncs[Secret]()])  # E
        b.watches(info, enqueue_mapped(lambda o: [ObjectKey("", o["spec"]["name"])]))
        b.watches(Secret, enqueue_mapped(lambda o: [o.data]), metadata_only=True)  # E
        controller_for(factory, info, predicates=[generation_changed()]).build(Good())
        controller_for(factory, Secret, metadata_only=True, predicates=secret_only)  # E


    def wire_manager(manager: Manager, info: ResourceInfo) -> None:
        manager.controller_for(info, predicates=[PredicateFuncs[Unstructured]()]).build(Good())
        manager.controller_for(info, predicates=[PredicateFuncs[Secret]()])  # E
        meta = [PredicateFuncs[PartialObjectMetadata]()]
        manager.controller_for(Secret, metadata_only=True, predicates=meta).build(Good())
        manager.controller_for(Secret, metadata_only=True, predicates=secret_only)  # E
        manager.controller_for(ConfigMap, predicates=[PredicateFuncs[Secret]()])  # E
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
