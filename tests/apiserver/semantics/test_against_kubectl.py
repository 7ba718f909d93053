# ruff: noqa: E501
"""Differential tests: our patch engines against the Go code inside ``kubectl patch --local``.

``kubectl patch --local`` runs the same ``strategicpatch`` and ``json-patch`` packages as
kube-apiserver, offline, so every case here compares our result with the real Go result.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcm.apiserver._patch import PatchError, apply_json_patch, apply_merge_patch
from kcm.apiserver._strategic import apply_strategic_merge_patch

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["x/a", "x/b"]},
    "spec": {
        "containers": [
            {
                "name": "a",
                "image": "a:1",
                "env": [{"name": "E1", "value": "1"}, {"name": "E2", "value": "2"}],
                "ports": [{"containerPort": 80, "name": "http"}],
                "args": ["--x"],
            },
            {"name": "b", "image": "b:1", "volumeMounts": [{"mountPath": "/d", "name": "d"}]},
        ],
        "volumes": [{"name": "d", "emptyDir": {}}],
        "tolerations": [{"key": "t1", "operator": "Exists"}],
        "nodeSelector": {"disk": "ssd", "zone": "z1"},
    },
    "status": {"conditions": [{"type": "Ready", "status": "False"}]},
}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "w"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
        "template": {
            "metadata": {"labels": {"app": "w"}},
            "spec": {"containers": [{"name": "w", "image": "w:1"}]},
        },
    },
}

STRATEGIC: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("image", POD, {"spec": {"containers": [{"name": "b", "image": "b:2"}]}}),
    ("new container", POD, {"spec": {"containers": [{"name": "c", "image": "c"}]}}),
    ("new and old", POD, {"spec": {"containers": [{"name": "c", "image": "c"}, {"name": "a", "image": "a:2"}]}}),
    ("env merge", POD, {"spec": {"containers": [{"name": "a", "env": [{"name": "E3", "value": "3"}, {"name": "E1", "value": "9"}]}]}}),
    ("port merge", POD, {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 443}, {"containerPort": 80, "protocol": "TCP"}]}]}}),
    ("delete item", POD, {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}),
    ("replace list", POD, {"spec": {"containers": [{"name": "z", "image": "z"}, {"$patch": "replace"}]}}),
    ("replace map", POD, {"spec": {"nodeSelector": {"x": "y", "$patch": "replace"}}}),
    ("atomic list", POD, {"spec": {"tolerations": [{"key": "t2"}], "containers": [{"name": "a", "args": ["--y"]}]}}),
    ("null deletes", POD, {"metadata": {"labels": {"a": None, "b": "2"}}, "spec": {"nodeSelector": {"zone": None}}}),
    ("finalizers union", POD, {"metadata": {"finalizers": ["x/c", "x/a"]}}),
    ("delete from primitive list", POD, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x/a"]}}),
    ("set element order", POD, {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "c"}, {"name": "a"}], "containers": [{"name": "c", "image": "c"}]}}),
    ("order primitives", POD, {"metadata": {"$setElementOrder/finalizers": ["x/b", "x/new", "x/a"], "finalizers": ["x/new"]}}),
    ("retain keys volume", POD, {"spec": {"volumes": [{"name": "d", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}]}}),
    ("status conditions", POD, {"status": {"conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}]}}),
    ("retain keys strategy", DEPLOYMENT, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
    ("template containers", DEPLOYMENT, {"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "side", "image": "s"}]}}}}),
    ("kubectl apply shape", DEPLOYMENT, {"$setElementOrder/spec": None, "spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "w"}, {"name": "side"}], "containers": [{"name": "side", "image": "s"}]}}}}),
]  # fmt: skip


def _kubectl_patch(tmp_path: Path, doc: dict[str, Any], patch_type: str, patch: Any) -> Any:
    src = tmp_path / "obj.json"
    src.write_text(json.dumps(doc))
    proc = subprocess.run(
        [
            "kubectl",
            "patch",
            "--local",
            "-f",
            str(src),
            "--type",
            patch_type,
            "-p",
            json.dumps(patch),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        return ("error", proc.stderr.strip().removeprefix("error: "))
    return json.loads(proc.stdout)


@pytest.mark.parametrize(("name", "doc", "patch"), STRATEGIC, ids=[c[0] for c in STRATEGIC])
def test_strategic_merge_matches_kubectl(
    name: str, doc: dict[str, Any], patch: dict[str, Any], tmp_path: Path
) -> None:
    if name == "kubectl apply shape":
        patch = {"spec": patch["spec"]}
    group = doc["apiVersion"].rpartition("/")[0]
    expected = _kubectl_patch(tmp_path, doc, "strategic", patch)
    ours = apply_strategic_merge_patch(doc, patch, group=group, kind=doc["kind"])
    assert ours == expected


JSON_PATCHES: list[tuple[str, list[dict[str, Any]]]] = [
    ("add", [{"op": "add", "path": "/metadata/labels/b", "value": "2"}]),
    ("add index", [{"op": "add", "path": "/spec/containers/1", "value": {"name": "n", "image": "n"}}]),
    ("add end", [{"op": "add", "path": "/metadata/finalizers/-", "value": "x/z"}]),
    ("negative", [{"op": "remove", "path": "/metadata/finalizers/-1"}]),
    ("replace missing key", [{"op": "replace", "path": "/metadata/labels/new", "value": "v"}]),
    ("move copy", [{"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"}, {"op": "move", "from": "/spec/nodeSelector/disk", "path": "/metadata/labels/disk"}]),
    ("test ok", [{"op": "test", "path": "/spec/containers/0/name", "value": "a"}, {"op": "test", "path": "/metadata/nope", "value": None}]),
    ("test fails", [{"op": "test", "path": "/metadata/name", "value": "q"}]),
    ("remove missing", [{"op": "remove", "path": "/metadata/zzz"}]),
    ("bad index", [{"op": "add", "path": "/metadata/finalizers/9", "value": "x"}]),
    ("missing parent", [{"op": "add", "path": "/nope/deeper", "value": 1}]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "ops"), JSON_PATCHES, ids=[c[0] for c in JSON_PATCHES])
def test_json_patch_matches_kubectl(name: str, ops: list[dict[str, Any]], tmp_path: Path) -> None:
    expected = _kubectl_patch(tmp_path, POD, "json", ops)
    try:
        ours: Any = apply_json_patch(POD, ops)
    except PatchError as exc:
        ours = ("error", exc.detail)
    assert ours == expected


MERGE_PATCHES: list[dict[str, Any]] = [
    {"metadata": {"labels": {"a": None, "c": "3"}}},
    {"spec": {"containers": [{"name": "only", "image": "o"}]}},
    {"spec": {"nodeSelector": None, "hostname": "h"}},
]


@pytest.mark.parametrize("patch", MERGE_PATCHES)
def test_merge_patch_matches_kubectl(patch: dict[str, Any], tmp_path: Path) -> None:
    assert apply_merge_patch(POD, patch) == _kubectl_patch(tmp_path, POD, "merge", patch)


# --- randomised: one random patch against many random pods per kubectl call ---------------

_NAMES = ["a", "b", "c", "d"]
_container: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {"name": st.sampled_from(_NAMES)},
    optional={
        "image": st.sampled_from(["i1", "i2"]),
        "env": st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(["E1", "E2", "E3"]), "value": st.sampled_from(["1", "2"])}
            ),
            max_size=3,
            unique_by=lambda e: str(e["name"]),
        ),
        "args": st.lists(st.sampled_from(["x", "y"]), max_size=2),
    },
)
_containers = st.lists(_container, max_size=4, unique_by=lambda c: c["name"])
_finalizers = st.lists(st.sampled_from(["f/a", "f/b", "f/c"]), max_size=3, unique=True)


@st.composite
def _patches(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    items: list[dict[str, Any]] = list(draw(_containers))
    if draw(st.booleans()):
        items.append({"name": draw(st.sampled_from(_NAMES)), "$patch": "delete"})
        items = list({i["name"]: i for i in items}.values())
    if items:
        spec["containers"] = items
    if draw(st.booleans()):
        order = draw(st.permutations(_NAMES))
        named = {i["name"] for i in items if "$patch" not in i}
        spec["$setElementOrder/containers"] = [
            {"name": n} for n in order if n in named or draw(st.booleans())
        ]
        if not named <= {o["name"] for o in spec["$setElementOrder/containers"]}:
            del spec["$setElementOrder/containers"]
    patch: dict[str, Any] = {"spec": spec}
    fin = draw(_finalizers)
    if fin:
        patch["metadata"] = {"finalizers": fin}
    elif draw(st.booleans()):
        patch["metadata"] = {"$deleteFromPrimitiveList/finalizers": ["f/a"]}
    return patch


@settings(max_examples=15, deadline=None)
@given(
    # kubectl decodes JSON arrays with power-of-two capacity while kube-apiserver's arrays have
    # cap == len (which _strategic models); the two only agree for these lengths.
    st.lists(
        st.tuples(_containers.filter(lambda c: len(c) in (0, 1, 2, 4)), _finalizers),
        min_size=5,
        max_size=10,
    ),
    _patches(),
)
def test_random_strategic_patches_match_kubectl(
    docs: list[tuple[list[dict[str, Any]], list[str]]], patch: dict[str, Any]
) -> None:
    pods = []
    for i, (containers, finalizers) in enumerate(docs):
        meta: dict[str, Any] = {"name": f"p{i}"}
        if finalizers:
            meta["finalizers"] = finalizers
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": {"containers": containers},
            }
        )
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "list.json"
        src.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
        proc = subprocess.run(
            [
                "kubectl",
                "patch",
                "--local",
                "-f",
                str(src),
                "--type",
                "strategic",
                "-p",
                json.dumps(patch),
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    if proc.returncode != 0:
        # kubectl stops at the first failing item; at least that item fails for us too
        failures = 0
        for p in pods:
            try:
                apply_strategic_merge_patch(p, patch, group="", kind="Pod")
            except PatchError:
                failures += 1
        assert failures, proc.stderr
        return
    decoder = json.JSONDecoder()
    text, pos, expected = proc.stdout, 0, []
    while pos < len(text.rstrip()):
        obj, end = decoder.raw_decode(text, pos)
        expected.append(obj)
        pos = end
        while pos < len(text) and text[pos].isspace():
            pos += 1
    ours = [apply_strategic_merge_patch(p, patch, group="", kind="Pod") for p in pods]
    assert ours == expected
