"""Discovery (built-ins offline, CRDs fetched, cached, refreshed on a miss); the JSON-patch diff."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import jsonpatch
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcm.client import ApiClient, json_patch
from kcm.errors import NotFound
from kcm.models import Unstructured

MakeClient = Callable[..., ApiClient]


def resource_list(*kinds: tuple[str, str, bool]) -> dict[str, Any]:
    resources: list[dict[str, Any]] = []
    for kind, plural, namespaced in kinds:
        resources.append(
            {
                "name": plural,
                "singularName": kind.lower(),
                "namespaced": namespaced,
                "kind": kind,
                "verbs": ["get", "list", "watch"],
                "shortNames": [kind.lower()[:2]],
            }
        )
        resources.append({"name": f"{plural}/status", "namespaced": namespaced, "kind": kind})
    return {"kind": "APIResourceList", "groupVersion": "example.com/v1", "resources": resources}


@pytest.mark.anyio
async def test_builtin_kinds_need_no_request(make_client: MakeClient, server: Any) -> None:
    async with make_client() as client:
        info = await client.discover("apps/v1", "Deployment")
        core = await client.discover("v1", "ConfigMap")
    assert (info.plural, info.namespaced, info.group) == ("deployments", True, "apps")
    assert core.path(namespace="x") == "/api/v1/namespaces/x/configmaps"
    assert server.requests == []


@pytest.mark.anyio
async def test_custom_kinds_cached_and_refreshed_on_miss(
    make_client: MakeClient, server: Any
) -> None:
    server.add(200, resource_list(("Widget", "widgets", True)))
    server.add(200, resource_list(("Widget", "widgets", True), ("Gadget", "gadgets", False)))
    async with make_client() as client:
        widget = await client.discover("example.com/v1", "Widget")
        again = await client.discover("example.com/v1", "Widget")
        assert len(server.requests) == 1  # cached
        gadget = await client.discover("example.com/v1", "Gadget")  # a miss: refetch
        assert len(server.requests) == 2
        api = client.api(Unstructured, resource=gadget)
    assert widget is again
    assert widget.plural == "widgets"
    assert widget.namespaced
    assert widget.subresources == frozenset({"status"})
    assert widget.short_names == ("wi",)
    assert widget.verbs == ("get", "list", "watch")
    assert gadget.path(name="g") == "/apis/example.com/v1/gadgets/g"
    assert api.namespace is None
    assert [r.url.path for r in server.requests] == ["/apis/example.com/v1"] * 2


@pytest.mark.anyio
async def test_unknown_kind_and_group(make_client: MakeClient, server: Any) -> None:
    server.add(200, resource_list(("Widget", "widgets", True)))
    server.status(404, "NotFound", "the server could not find the requested resource")
    async with make_client() as client:
        with pytest.raises(NotFound, match="it has: Widget"):
            await client.discover("example.com/v1", "Nope")
        with pytest.raises(NotFound, match="CRD installed"):
            await client.discover("missing.io/v1", "Thing")
    assert [r.url.path for r in server.requests] == ["/apis/example.com/v1", "/apis/missing.io/v1"]


@pytest.mark.anyio
async def test_core_group_discovery_path(make_client: MakeClient, server: Any) -> None:
    server.default = httpx.Response(200, json=resource_list(("Odd", "odds", True)))
    async with make_client() as client:
        info = await client.discover("v1", "Odd")
    assert server.last.url.path == "/api/v1"
    assert info.api_version == "v1"


# ----------------------------------------------------------------------------- JSON patch


def test_patch_ops_and_pointer_escaping() -> None:
    old = {"metadata": {"labels": {"a/b": "1", "x~y": "2", "gone": "3"}}, "n": 1, "flag": True}
    new = {"metadata": {"labels": {"a/b": "9", "x~y": "2"}}, "n": 1.5, "flag": 1, "add": [1]}
    assert json_patch(old, new) == [
        {"op": "remove", "path": "/metadata/labels/gone"},
        {"op": "replace", "path": "/metadata/labels/a~1b", "value": "9"},
        {"op": "replace", "path": "/n", "value": 1.5},
        {"op": "replace", "path": "/flag", "value": 1},  # a type change is a change
        {"op": "add", "path": "/add", "value": [1]},
    ]


def test_lists_equal_length_per_index_else_whole() -> None:
    same_len = json_patch({"l": [{"a": 1}, {"a": 2}]}, {"l": [{"a": 1}, {"a": 3}]})
    assert same_len == [{"op": "replace", "path": "/l/1/a", "value": 3}]
    grown = json_patch({"l": [1, 2]}, {"l": [1, 2, 3]})
    assert grown == [{"op": "replace", "path": "/l", "value": [1, 2, 3]}]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b/c", "d~e", ""]), children, max_size=3)
    ),
    max_leaves=12,
)


@given(
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
)
def test_patch_applies_to_the_target(old: dict[str, Any], new: dict[str, Any]) -> None:
    ops = json_patch(old, new)
    assert jsonpatch.apply_patch(old, ops) == new
