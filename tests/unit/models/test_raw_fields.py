"""managedFields[].fieldsV1: owned by the decoded object (never a view of the response), and one
shared object for equal bytes."""

from __future__ import annotations

import msgspec

from kcm.models import decoder, encode
from kcm.models._raw_fields import _MAX_SHARED, _SHARED, shared_raw
from kcm.models.core_v1 import Pod, PodList


def _pod(name: str, fields: str) -> bytes:
    return (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","managedFields":'
        b'[{"manager":"kubelet","operation":"Update","fieldsType":"FieldsV1","fieldsV1":%s}]}}'
        % (name.encode(), fields.encode())
    )


def test_pods_with_the_same_field_sets_share_one_raw_and_encode_unchanged() -> None:
    fields = '{"f:status":{"f:phase":{}}}'
    page = b'{"apiVersion":"v1","kind":"PodList","metadata":{},"items":[%s,%s,%s]}' % (
        _pod("a", fields),
        _pod("b", fields),
        _pod("c", '{"f:spec":{}}'),
    )
    a, b, c = decoder(PodList).decode(page).items
    raws = [p.metadata.managed_fields[0].fields_v1 for p in (a, b, c)]
    assert raws[0] is raws[1]
    assert raws[2] is not raws[0]
    assert bytes(raws[2]) == b'{"f:spec":{}}'
    assert msgspec.json.decode(encode(a))["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:status": {"f:phase": {}}
    }


def test_a_shared_raw_owns_its_bytes() -> None:
    """Not a view of the response: changing (or freeing) the buffer leaves the object intact."""
    buffer = bytearray(_pod("a", '{"f:metadata":{"f:labels":{}}}'))
    pod = decoder(Pod).decode(buffer)
    buffer[:] = b"x" * len(buffer)
    assert bytes(pod.metadata.managed_fields[0].fields_v1) == b'{"f:metadata":{"f:labels":{}}}'


def test_the_table_of_shared_values_stays_bounded() -> None:
    for n in range(_MAX_SHARED + 10):
        shared_raw(msgspec.Raw(b'{"f:n%d":{}}' % n))
    assert len(_SHARED) <= _MAX_SHARED
    first = shared_raw(msgspec.Raw(b'{"f:again":{}}'))
    assert shared_raw(msgspec.Raw(b'{"f:again":{}}')) is first


def test_an_entry_without_field_sets_encodes_without_them() -> None:
    pod = decoder(Pod).decode(
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","managedFields":'
        b'[{"manager":"m","operation":"Update"}]}}'
    )
    assert msgspec.json.decode(encode(pod))["metadata"]["managedFields"] == [
        {"manager": "m", "operation": "Update"}
    ]
