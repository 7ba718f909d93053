"""Property tests: any ObjectMeta / Lease built from random values survives encode -> decode.

Arrays are built as tuples, the type decoding gives them (a tuple never equals a list)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from kcm.models import Lease, ObjectMeta, OwnerReference, decode, encode, from_dict, to_dict
from kcm.models.coordination_v1 import LeaseSpec

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
times = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)
metas = st.builds(
    ObjectMeta,
    name=st.none() | names,
    namespace=st.none() | names,
    labels=st.none() | st.dictionaries(names, names, max_size=4),
    annotations=st.none() | st.dictionaries(names, names, max_size=3),
    finalizers=st.none() | st.lists(names, max_size=3).map(tuple),
    generation=st.none() | st.integers(-(2**63), 2**63 - 1),
    creation_timestamp=st.none() | times,
    owner_references=st.none()
    | st.lists(
        st.builds(
            OwnerReference,
            api_version=names,
            kind=names,
            name=names,
            uid=names,
            controller=st.none() | st.booleans(),
        ),
        max_size=2,
    ).map(tuple),
)


@settings(max_examples=150, deadline=None)
@given(metas)
def test_object_meta_round_trips(meta: ObjectMeta) -> None:
    assert decode(ObjectMeta, encode(meta)) == meta
    assert from_dict(ObjectMeta, to_dict(meta)) == meta


@settings(max_examples=100, deadline=None)
@given(metas, st.none() | times, st.none() | st.integers(0, 2**31 - 1))
def test_lease_round_trips_with_micro_time(
    meta: ObjectMeta, renew: datetime | None, duration: int | None
) -> None:
    lease = Lease(metadata=meta, spec=LeaseSpec(renew_time=renew, lease_duration_seconds=duration))
    wire = encode(lease)
    back = decode(Lease, wire)
    assert back == lease
    if renew is not None:
        text = to_dict(lease)["spec"]["renewTime"]
        assert len(text) == len("2024-05-01T10:00:00.000000Z")
        assert text.endswith("Z")
        assert text[19] == "."
