"""SharedIndexInformer[Pod], Lister[Pod] and friends type-check under mypy --strict, and
``kcm.client.Api[T]`` satisfies the ListerWatcher[T] protocol structurally."""

from __future__ import annotations

from pathlib import Path

import pytest

SNIPPET = """
from kcm.client import Api, ApiClient
from kcm.informers import (
    HandlerRegistration, Lister, ListerWatcher, NamespaceLister, SharedIndexInformer,
    SharedInformerFactory,
)
from kcm.models import PartialObjectMetadata, ResourceInfo, Unstructured
from kcm.models.core_v1 import Pod


def build(api: Api[Pod], client: ApiClient, info: ResourceInfo) -> None:
    lw: ListerWatcher[Pod] = api
    informer: SharedIndexInformer[Pod] = SharedIndexInformer(lw)
    lister: Lister[Pod] = informer.lister()
    pod: Pod = lister.get("default", "web-0")
    pods: list[Pod] = lister.list("app=web")
    scoped: NamespaceLister[Pod] = lister.namespace("default")
    reg: HandlerRegistration = informer.add_event_handler(
        on_add=lambda p: print(p.spec), on_update=lambda old, new: None
    )
    factory = SharedInformerFactory(client)
    typed: SharedIndexInformer[Pod] = factory.informer_for(Pod)
    raw: SharedIndexInformer[Unstructured] = factory.unstructured_informer(info)
    meta: SharedIndexInformer[PartialObjectMetadata] = factory.metadata_informer(Pod)
    print(pod, pods, scoped, reg, typed, raw, meta)


def wrong(informer: SharedIndexInformer[Pod]) -> None:
    name: int = informer.lister().get("ns", "n").metadata.name  # error: str | None
"""


@pytest.mark.slow
def test_generic_informer_api_type_checks(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    source = tmp_path / "informer_typing_snippet.py"
    source.write_text(SNIPPET)
    root = Path(__file__).resolve().parents[3]
    out, err, _ = api.run(["--strict", "--config-file", str(root / "pyproject.toml"), str(source)])
    errors = [line for line in out.splitlines() if "informer_typing_snippet.py" in line]
    # Exactly the one deliberate error: the types really flow through (no Any).
    assert len(errors) == 1, out + err
    assert ":29:" in errors[0]  # the line in wrong()
    assert 'Incompatible types in assignment (expression has type "str | None"' in errors[0]
