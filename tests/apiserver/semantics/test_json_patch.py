"""RFC 6902 JSON patch and RFC 7386 merge patch, as kube-apiserver (json-patch v4) applies them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcm.apiserver._patch import (
    MAX_JSON_PATCH_OPERATIONS,
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    json_copy,
    json_equal,
)

# RFC 6902 appendix A (the examples that must succeed).
RFC6902_OK: list[tuple[str, Any, list[dict[str, Any]], Any]] = [
    ("A.1 add member", {"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}],
     {"baz": "qux", "foo": "bar"}),
    ("A.2 add array element", {"foo": ["bar", "baz"]},
     [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ("A.3 remove member", {"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}],
     {"foo": "bar"}),
    ("A.4 remove element", {"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}],
     {"foo": ["bar", "baz"]}),
    ("A.5 replace", {"baz": "qux", "foo": "bar"},
     [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    ("A.6 move member", {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    ("A.7 move element", {"foo": ["all", "grass", "cows", "eat"]},
     [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),
    ("A.8 test ok", {"baz": "qux", "foo": ["a", 2, "c"]},
     [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),
    ("A.10 add nested", {"foo": "bar"},
     [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
     {"foo": "bar", "child": {"grandchild": {}}}),
    ("A.11 ignore unknown members", {"foo": "bar"},
     [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}], {"foo": "bar", "baz": "qux"}),
    ("A.14 escapes", {"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}],
     {"/": 9, "~1": 10}),
    ("A.14b slash key", {"/": 9}, [{"op": "replace", "path": "/~1", "value": 1}], {"/": 1}),
    ("A.16 add array value", {"foo": ["bar"]},
     [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
     {"foo": ["bar", ["abc", "def"]]}),
    ("copy", {"a": {"b": [1]}}, [{"op": "copy", "from": "/a", "path": "/c"}],
     {"a": {"b": [1]}, "c": {"b": [1]}}),
    ("add replaces member", {"a": 1}, [{"op": "add", "path": "/a", "value": 2}], {"a": 2}),
    ("add at end index", {"a": [1]}, [{"op": "add", "path": "/a/1", "value": 2}], {"a": [1, 2]}),
    ("negative add", {"a": [1, 2]}, [{"op": "add", "path": "/a/-1", "value": 9}],
     {"a": [1, 2, 9]}),
    ("negative remove", {"a": [1, 2, 3]}, [{"op": "remove", "path": "/a/-1"}], {"a": [1, 2]}),
    ("replace missing key adds (v4)", {"a": 1}, [{"op": "replace", "path": "/b", "value": 2}],
     {"a": 1, "b": 2}),
    ("test missing key against null", {"a": 1}, [{"op": "test", "path": "/b", "value": None}],
     {"a": 1}),
    ("test null value", {"a": None}, [{"op": "test", "path": "/a", "value": None}], {"a": None}),
    ("test number by value", {"a": 1}, [{"op": "test", "path": "/a", "value": 1.0}], {"a": 1}),
    ("add null", {}, [{"op": "add", "path": "/a", "value": None}], {"a": None}),
    ("empty key", {"": 1}, [{"op": "replace", "path": "/", "value": 2}], {"": 2}),
    ("rv test then replace", {"metadata": {"resourceVersion": "5"}, "spec": {"replicas": 1}},
     [{"op": "test", "path": "/metadata/resourceVersion", "value": "5"},
      {"op": "replace", "path": "/spec/replicas", "value": 3}],
     {"metadata": {"resourceVersion": "5"}, "spec": {"replicas": 3}}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "doc", "ops", "expected"), RFC6902_OK, ids=[c[0] for c in RFC6902_OK]
)
def test_json_patch_ok(name: str, doc: Any, ops: list[dict[str, Any]], expected: Any) -> None:
    before_doc, before_ops = copy.deepcopy(doc), copy.deepcopy(ops)
    result = apply_json_patch(doc, ops)
    assert json_equal(result, expected)
    assert doc == before_doc, "the document was mutated"
    assert ops == before_ops, "the patch was mutated"


RFC6902_FAIL: list[tuple[str, Any, list[dict[str, Any]], str]] = [
    ("A.9 test fails", {"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}],
     "testing value /baz failed: test failed"),
    ("A.12 add to nonexistent", {"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": 1}],
     'add operation does not apply: doc is missing path: "/baz/bat"'),
    ("A.15 test string vs number", {"/": 9, "~1": 10},
     [{"op": "test", "path": "/~01", "value": "10"}], "testing value /~01 failed: test failed"),
    ("remove missing key", {"a": 1}, [{"op": "remove", "path": "/b"}],
     "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value"),
    ("remove bad index", {"a": [1]}, [{"op": "remove", "path": "/a/5"}],
     "error in remove for path: '/a/5': Unable to access invalid index: 5"),
    ("add bad index", {"a": [1]}, [{"op": "add", "path": "/a/3", "value": 1}],
     "error in add for path: '/a/3': Unable to access invalid index: 3: invalid index referenced"),
    ("replace bad index", {"a": [1]}, [{"op": "replace", "path": "/a/1", "value": 1}],
     "replace operation does not apply: doc is missing key: /a/1: missing value"),
    ("replace missing parent", {}, [{"op": "replace", "path": "/a/b", "value": 1}],
     "replace operation does not apply: doc is missing path: /a/b"),
    ("test missing parent", {}, [{"op": "test", "path": "/a/b", "value": 1}],
     "test operation does not apply: is missing path: /a/b"),
    ("test bool vs number", {"a": 1}, [{"op": "test", "path": "/a", "value": True}],
     "testing value /a failed: test failed"),
    ("test missing key non-null", {}, [{"op": "test", "path": "/a", "value": 1}],
     "testing value /a failed: test failed"),
    ("move missing from", {}, [{"op": "move", "from": "/a/b", "path": "/c"}],
     "move operation does not apply: doc is missing from path: /a/b"),
    ("move missing key", {}, [{"op": "move", "from": "/a", "path": "/c"}],
     "error in move for path: 'a': Unable to remove nonexistent key: a: missing value"),
    ("copy missing dest", {"a": 1}, [{"op": "copy", "from": "/a", "path": "/x/y"}],
     "copy operation does not apply: doc is missing destination path: /x/y"),
    ("unknown op", {}, [{"op": "frob", "path": "/a"}], "Unexpected kind: frob"),
    ("root path", {}, [{"op": "add", "path": "", "value": 1}],
     'add operation does not apply: doc is missing path: ""'),
    ("missing path", {}, [{"op": "add", "value": 1}],
     "add operation failed to decode path: missing value"),
    ("through a scalar", {"a": 1}, [{"op": "add", "path": "/a/b", "value": 1}],
     'add operation does not apply: doc is missing path: "/a/b"'),
    ("non-numeric index", {"a": [1]}, [{"op": "add", "path": "/a/x", "value": 1}],
     "value was not a proper array index: 'x'"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "doc", "ops", "message"), RFC6902_FAIL, ids=[c[0] for c in RFC6902_FAIL]
)
def test_json_patch_fail(name: str, doc: Any, ops: list[dict[str, Any]], message: str) -> None:
    before = copy.deepcopy(doc)
    with pytest.raises(PatchError) as info:
        apply_json_patch(doc, ops)
    assert message in info.value.detail
    assert info.value.code == 422
    assert doc == before
    status = info.value.to_status()
    assert status["code"] == 422
    assert status["reason"] == "Invalid"
    assert status["message"] == "the server rejected our request due to an error in our request"
    assert status["details"] == {}


def test_failed_patch_is_atomic() -> None:
    doc = {"a": 1}
    with pytest.raises(PatchError):
        apply_json_patch(
            doc, [{"op": "add", "path": "/b", "value": 2}, {"op": "remove", "path": "/zz"}]
        )
    assert doc == {"a": 1}


def test_malformed_patch_documents_are_400() -> None:
    for body in ({"op": "add"}, "x", 5, ["x"]):
        with pytest.raises(PatchError) as info:
            apply_json_patch({}, body)
        assert info.value.code == 400
        assert info.value.to_status()["reason"] == "BadRequest"
    with pytest.raises(PatchError) as info:
        apply_json_patch(
            {}, [{"op": "test", "path": "/a", "value": None}] * (MAX_JSON_PATCH_OPERATIONS + 1)
        )
    assert info.value.code == 413
    assert info.value.to_status()["reason"] == "RequestEntityTooLarge"


def test_result_shares_nothing_with_inputs() -> None:
    value = {"x": [1]}
    doc: dict[str, Any] = {"keep": {"deep": [1, 2]}}
    result = apply_json_patch(doc, [{"op": "add", "path": "/v", "value": value}])
    result["v"]["x"].append(2)
    result["keep"]["deep"].append(3)
    assert value == {"x": [1]}
    assert doc == {"keep": {"deep": [1, 2]}}


def test_json_equal_and_copy() -> None:
    assert json_equal({"a": [1, {"b": 2.0}]}, {"a": [1, {"b": 2}]})
    assert not json_equal(1, True)
    assert not json_equal(0, False)
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal([1], [1, 2])
    assert not json_equal("1", 1)
    assert json_equal(None, None)
    src = {"a": [{"b": 1}]}
    cp = json_copy(src)
    assert cp == src
    assert cp["a"][0] is not src["a"][0]


# --- property: add then remove is the identity ------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text("ab~/", max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@settings(max_examples=200)
@given(
    st.dictionaries(st.text("ab~/", max_size=3), _json, max_size=4),
    st.text("abc~/", min_size=1, max_size=4),
    _json,
)
def test_add_then_remove_is_identity(doc: dict[str, Any], key: str, value: Any) -> None:
    doc.pop(key, None)
    path = "/" + _escape(key)
    added = apply_json_patch(doc, [{"op": "add", "path": path, "value": value}])
    assert json_equal(added[key], value)
    assert json_equal(apply_json_patch(added, [{"op": "remove", "path": path}]), doc)
    # and a test of what was added passes
    apply_json_patch(added, [{"op": "test", "path": path, "value": value}])


@settings(max_examples=200)
@given(st.lists(_json, max_size=5), st.data())
def test_array_insert_then_remove(items: list[Any], data: st.DataObject) -> None:
    idx = data.draw(st.integers(0, len(items)))
    doc = {"l": items}
    added = apply_json_patch(doc, [{"op": "add", "path": f"/l/{idx}", "value": "NEW"}])
    assert added["l"][idx] == "NEW"
    assert len(added["l"]) == len(items) + 1
    assert json_equal(apply_json_patch(added, [{"op": "remove", "path": f"/l/{idx}"}]), doc)


# --- RFC 7386 --------------------------------------------------------------------------------

RFC7386: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("doc", "patch", "expected"), RFC7386)
def test_merge_patch_rfc7386_examples(doc: Any, patch: Any, expected: Any) -> None:
    before_doc, before_patch = copy.deepcopy(doc), copy.deepcopy(patch)
    assert apply_merge_patch(doc, patch) == expected
    assert doc == before_doc
    assert patch == before_patch


def test_merge_patch_k8s_shapes() -> None:
    pod: dict[str, Any] = {
        "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    patched = apply_merge_patch(
        pod,
        {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"containers": [{"name": "d"}]}},
    )
    assert patched == {
        "metadata": {"name": "p", "labels": {"b": "2", "c": "3"}},
        "spec": {"containers": [{"name": "d"}]},  # lists are replaced whole
    }
    patched["metadata"]["labels"]["z"] = "z"
    assert "z" not in pod["metadata"]["labels"]
    with pytest.raises(PatchError) as info:
        apply_merge_patch(pod, None)
    assert info.value.code == 400


@settings(max_examples=200)
@given(
    st.dictionaries(st.text("abc", max_size=2), _json, max_size=4),
    st.dictionaries(st.text("abc", max_size=2), _json, max_size=4),
)
def test_merge_patch_properties(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    result = apply_merge_patch(doc, patch)
    for key, value in patch.items():
        if value is None:
            assert key not in result
        elif not isinstance(value, dict):
            assert result[key] == apply_merge_patch({}, {"v": value})["v"]
    for key in doc:
        if key not in patch:
            assert result[key] == doc[key]
    # applying the same patch twice changes nothing more (merge patches are idempotent)
    assert apply_merge_patch(result, patch) == result
