"""ControllerRevision history: names, Go's hash byte for byte, new revisions, order, equality,
and the cache-only part of History (listing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

import msgspec
import pytest

from kcm.client import ApiClient
from kcm.controllerkit import (
    CONTROLLER_REVISION_HASH_LABEL,
    History,
    controller_revision_name,
    equal_revision,
    find_equal_revisions,
    hash_controller_revision,
    new_controller_revision,
    sort_controller_revisions,
)
from kcm.informers import Indexer, Lister
from kcm.models import decode, resource_info_for
from kcm.models.apps_v1 import ControllerRevision, StatefulSet
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.runtime import get_controller_of
from kcm.selectors import LabelSelector

STS = resource_info_for(StatefulSet)
PARENT = StatefulSet(metadata=ObjectMeta(name="web", namespace="default", uid="uid-web"))
T0 = datetime(2026, 1, 1, tzinfo=UTC)

# What Go's json.Marshal writes for this patch (keys sorted, compact): the data a StatefulSet
# controller stores. The expected hashes below are Go's: hash/fnv New32 (FNV-1) over these
# bytes, then strconv.FormatInt(probe, 10), Sum32 printed in decimal, then SafeEncodeString
# (each decimal digit d becomes "bcdfghjklmnpqrstvwxz2456789"[(ord(d)) % 27]), computed with
# pkg/controller/history's HashControllerRevision and k8s.io/apimachinery's rand package.
GO_RAW = (
    b'{"spec":{"$patch":"replace","template":{"metadata":{"labels":{"app":"web"}},'
    b'"spec":{"containers":[{"image":"nginx:1.25","name":"c"}]}}}}'
)
GO_HASHES = {None: "56f659fd7f", 0: "6b8764cdbf", 5: "6b8764cdb8", -3: "6c89668b9f"}


def revision(
    name: str,
    number: int,
    *,
    data: Any = None,
    created: datetime | None = None,
    labels: dict[str, str] | None = None,
    owner: OwnerReference | None = None,
) -> ControllerRevision:
    return ControllerRevision(
        metadata=ObjectMeta(
            name=name,
            namespace="default",
            creation_timestamp=created,
            labels=labels,
            owner_references=[owner] if owner is not None else None,
        ),
        data=data,
        revision=number,
    )


def decoded(data: bytes) -> ControllerRevision:
    """A revision as the client decodes it from the API server (``data`` read-only JSON)."""
    body = b'{"kind":"ControllerRevision","apiVersion":"apps/v1","revision":1,"data":' + data
    return decode(ControllerRevision, body + b"}")


def test_controller_revision_name_truncates_long_prefixes() -> None:
    assert controller_revision_name("web", "5d8f") == "web-5d8f"
    name = controller_revision_name("p" * 300, "abc")
    assert name == "p" * 223 + "-abc"
    assert len(controller_revision_name("p" * 300, "6b8764cdbf")) == 234


def test_hash_of_no_data_is_the_fnv32_offset_basis() -> None:
    # Go writes nothing for empty Data.Raw: Sum32 is the FNV-32 offset basis 2166136261, whose
    # digits 2,1,6,6,1,3,6,2,6,1 are ASCII 50,49,54,... -> alphabet[50 % 27 = 23] = "6", ...
    assert hash_controller_revision(ControllerRevision()) == "65bb57b6b5"
    # probe 0 writes the byte "0": FNV-1 of b"0" = 0x050C5D2F = 84696367
    assert hash_controller_revision(ControllerRevision(), 0) == "d8bfb7bc"


@pytest.mark.parametrize("probe", [None, 0, 5, -3])
def test_hash_matches_go_for_the_same_raw_bytes(probe: int | None) -> None:
    raw = ControllerRevision(data=msgspec.Raw(GO_RAW))
    assert hash_controller_revision(raw, probe) == GO_HASHES[probe]
    # The same data read back from the server (decoded, in any key order) hashes the same.
    reordered = (
        b'{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:1.25"}]},'
        b'"metadata":{"labels":{"app":"web"}}},"$patch":"replace"}}'
    )
    assert hash_controller_revision(decoded(reordered), probe) == GO_HASHES[probe]
    as_dict = ControllerRevision(data=msgspec.json.decode(GO_RAW))
    assert hash_controller_revision(as_dict, probe) == GO_HASHES[probe]


@pytest.mark.parametrize(
    ("data", "go_bytes", "go_hash"),
    [
        # json.Marshal's HTML-safe escapes, U+2028/9, control characters, UTF-8 kept as is
        (
            rb'{"s":"a<b>&c\u2028\u2029\u0001\n\t\r\"\\\u007f\u00e9\ud83d\ude00 \/"}',
            b'{"s":"a\\u003cb\\u003e\\u0026c\\u2028\\u2029\\u0001\\n\\t\\r\\"\\\\\x7f'
            + "é😀 /".encode()
            + b'"}',
            "c669d599c",
        ),
        # numbers as float64: shortest digits, fixed from 1e-6 to 1e21, exponents trimmed
        (
            b'{"b":1,"a":[1.0,2.5,1e21,1e-7,1.5e-7,null,true,false,0,-0.5,123456789,1e20,'
            b"0.000001,9.999e-7,12345678901234567890,3.14159265358979]}",
            b'{"a":[1,2.5,1e+21,1e-7,1.5e-7,null,true,false,0,-0.5,123456789,'
            b"100000000000000000000,0.000001,9.999e-7,12345678901234567000,3.14159265358979],"
            b'"b":1}',
            "86f56b9c4b",
        ),
        # keys sorted by their bytes at every level; empty objects and arrays kept
        (
            '{"z":{"y":{"x":[]},"w":{}},"é":1,"Z":2,"a b":3}'.encode(),
            '{"Z":2,"a b":3,"z":{"w":{},"y":{"x":[]}},"é":1}'.encode(),
            "59b54b5566",
        ),
        (b"[]", b"[]", "f57c9bc97"),
        (b'"x"', b'"x"', "f668dd459"),
        (b"1", b"1", "d8bfb7bb"),
    ],
)
def test_data_hashes_as_go_marshals_it(data: bytes, go_bytes: bytes, go_hash: str) -> None:
    """Decoded data is written as Go's json.Marshal writes the same value (these pairs were
    produced by Go's encoding/json), so a revision from the server hashes as in Go."""
    assert hash_controller_revision(ControllerRevision(data=msgspec.Raw(go_bytes))) == go_hash
    assert hash_controller_revision(decoded(data)) == go_hash


def test_hash_refuses_what_json_cannot_carry() -> None:
    with pytest.raises(ValueError, match="not a JSON number"):
        hash_controller_revision(ControllerRevision(data={"x": float("nan")}))
    with pytest.raises(TypeError, match="bytes"):
        hash_controller_revision(ControllerRevision(data={"x": b"raw"}))


def test_new_controller_revision() -> None:
    labels = {"app": "web"}
    data = {"spec": {"template": {"metadata": {"labels": {"app": "web"}}}}}
    rev = new_controller_revision(PARENT, STS, labels, data, 3, 2)
    hash_ = hash_controller_revision(rev, 2)
    assert rev.metadata.name == f"web-{hash_}"
    assert rev.metadata.namespace is None  # created in the parent's namespace
    assert rev.metadata.labels == {"app": "web", CONTROLLER_REVISION_HASH_LABEL: hash_}
    assert labels == {"app": "web"}  # the caller's labels are copied, not changed
    ref = get_controller_of(rev)
    assert ref is not None
    assert (ref.api_version, ref.kind, ref.name, ref.uid) == (
        "apps/v1",
        "StatefulSet",
        "web",
        "uid-web",
    )
    assert ref.block_owner_deletion is True
    assert (rev.data, rev.revision) == (data, 3)
    # the collision count is the hash's probe; None hashes without one
    assert (
        new_controller_revision(PARENT, STS, labels, data, 3, 2).metadata.name == rev.metadata.name
    )
    assert (
        new_controller_revision(PARENT, STS, labels, data, 3, 3).metadata.name != rev.metadata.name
    )
    no_probe = new_controller_revision(PARENT, STS, None, data, 1, None)
    assert no_probe.metadata.labels == {
        CONTROLLER_REVISION_HASH_LABEL: hash_controller_revision(rev)
    }


def test_new_controller_revision_needs_a_created_parent() -> None:
    with pytest.raises(ValueError, match="needs a name and a uid"):
        new_controller_revision(StatefulSet(metadata=ObjectMeta(name="web")), STS, None, {}, 1, 0)


def test_sort_by_revision_then_creation_then_name() -> None:
    revs = [
        revision("c", 2, created=T0),
        revision("b", 1, created=T0 + timedelta(seconds=1)),
        revision("z", 1, created=T0),
        revision("a", 1, created=T0),
        revision("none", 1),  # no creation time: Go's zero time, the earliest
        revision("zero", 0, created=T0),
    ]
    ordered = sort_controller_revisions(revs)
    assert [r.metadata.name for r in ordered] == ["zero", "none", "a", "z", "b", "c"]
    assert revs[0].metadata.name == "c"  # the input is not reordered


def test_equal_revision() -> None:
    data = {"spec": {"replicas": 3}}
    a = revision("a", 1, data=data, labels={CONTROLLER_REVISION_HASH_LABEL: "5d8f7c"})
    b = revision("b", 2, data={"spec": {"replicas": 3}}, labels={"other": "x"})
    assert equal_revision(None, None)
    assert not equal_revision(a, None)
    assert not equal_revision(None, a)
    assert equal_revision(a, b)  # same data; labels that are not numbers are no shortcut
    assert equal_revision(a, decoded(b'{"spec":{"replicas":3}}'))
    assert equal_revision(a, revision("raw", 1, data=msgspec.Raw(b'{"spec":{"replicas":3}}')))
    assert not equal_revision(a, revision("c", 1, data={"spec": {"replicas": 4}}))
    # Hash labels that parse as 32-bit integers and differ: unequal whatever the data.
    numeric = {CONTROLLER_REVISION_HASH_LABEL: "42"}
    other_numeric = {CONTROLLER_REVISION_HASH_LABEL: "-7"}
    x = revision("x", 1, data=data, labels=numeric)
    assert not equal_revision(x, revision("y", 1, data=data, labels=other_numeric))
    assert equal_revision(x, revision("y", 1, data=data, labels={**numeric}))
    # uint32(-1) == uint32(4294967295), but 4294967295 overflows ParseInt(.., 32): no shortcut
    too_big = {CONTROLLER_REVISION_HASH_LABEL: "4294967295"}
    assert equal_revision(x, revision("y", 1, data=data, labels=too_big))
    plus = {CONTROLLER_REVISION_HASH_LABEL: "+42"}
    assert equal_revision(x, revision("y", 1, data=data, labels=plus))
    assert not equal_revision(
        revision("y", 1, data=data, labels=plus), revision("z", 1, data=data, labels=other_numeric)
    )


def test_find_equal_revisions_keeps_the_order() -> None:
    revs = [
        revision("a", 3, data={"v": 1}),
        revision("b", 1, data={"v": 2}),
        revision("c", 2, data={"v": 1}),
    ]
    found = find_equal_revisions(revs, revision("needle", 9, data={"v": 1}))
    assert [r.metadata.name for r in found] == ["a", "c"]
    assert find_equal_revisions(revs, None) == []


def test_list_controller_revisions_returns_owned_and_orphans() -> None:
    ours = OwnerReference(
        api_version="apps/v1", kind="StatefulSet", name="web", uid="uid-web", controller=True
    )
    theirs = OwnerReference(
        api_version="apps/v1", kind="StatefulSet", name="db", uid="uid-db", controller=True
    )
    plain = OwnerReference(api_version="v1", kind="ConfigMap", name="cfg", uid="uid-cfg")
    indexer: Indexer[ControllerRevision] = Indexer()
    web = {"app": "web"}
    indexer.add(revision("owned", 1, labels=web, owner=ours))
    indexer.add(revision("orphan", 1, labels=web))
    indexer.add(revision("plain-owner", 1, labels=web, owner=plain))
    indexer.add(revision("foreign", 1, labels=web, owner=theirs))
    indexer.add(revision("unselected", 1, labels={"app": "db"}, owner=ours))
    other_ns = revision("elsewhere", 1, labels=web, owner=ours)
    indexer.add(
        msgspec.structs.replace(
            other_ns, metadata=msgspec.structs.replace(other_ns.metadata, namespace="other")
        )
    )
    history = History(cast(ApiClient, None), Lister(indexer))
    listed = history.list_controller_revisions(PARENT, LabelSelector.parse("app=web"))
    assert sorted(str(r.metadata.name) for r in listed) == ["orphan", "owned", "plain-owner"]
