"""PartSharer never changes what an object says, whatever the object."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kcm.informers import PartSharer
from kcm.models import decode, encode
from kcm.models.core_v1 import ConfigMap, Container, Pod, PodSpec
from kcm.models.meta_v1 import ObjectMeta, OwnerReference

_text = st.sampled_from(["", "a", "b", "web", "default", "node-1", "x" * 40])
_maps = st.none() | st.dictionaries(_text, _text, max_size=4)
_meta = st.builds(
    ObjectMeta,
    name=_text,
    namespace=_text,
    labels=_maps,
    annotations=_maps,
    owner_references=st.none()
    | st.lists(st.builds(OwnerReference, api_version=_text, kind=_text, name=_text, uid=_text)),
)
_pods = st.builds(
    Pod,
    metadata=_meta,
    spec=st.none()
    | st.builds(
        PodSpec,
        containers=st.lists(
            st.builds(
                Container, name=_text, image=_text, args=st.none() | st.lists(_text, max_size=3)
            ),
            max_size=3,
        ),
        node_name=st.none() | _text,
        node_selector=_maps,
    ),
)
_objects = _pods | st.builds(ConfigMap, metadata=_meta, data=_maps)


@settings(max_examples=200, deadline=None)
@given(st.lists(_objects, min_size=1, max_size=6), st.integers(1, 20))
def test_shared_objects_equal_their_inputs(objects: list[Pod | ConfigMap], size: int) -> None:
    sharer = PartSharer(max_entries=size)
    # Decode fresh copies so that equal values are distinct objects, as on the wire; the
    # expected value is decoded too (arrays decode as tuples, the built objects hold lists).
    wire = [encode(o) for o in objects]
    for obj, data in zip(objects, wire, strict=True):
        assert sharer(decode(type(obj), data)) == decode(type(obj), data)
    assert len(sharer) <= size
