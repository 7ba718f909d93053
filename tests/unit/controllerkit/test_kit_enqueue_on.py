"""EnqueueOn: the keys of the object on the events named (an update by its new object), none
on the others."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from kcm.controllerkit import EnqueueOn
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta


def _cm(name: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace="team"))


def _key(cm: ConfigMap) -> Iterable[ObjectKey]:
    return (ObjectKey("team", cm.metadata.name or ""),)


def _events(handler: EnqueueOn[ConfigMap]) -> tuple[list[ObjectKey], ...]:
    return (
        list(handler.create_keys(_cm("added"), is_in_initial_list=False)),
        list(handler.update_keys(_cm("old"), _cm("new"))),
        list(handler.delete_keys(_cm("deleted"), final_state_unknown=False)),
    )


def test_every_event_named_maps_its_object_and_an_update_its_new_one() -> None:
    added, updated, deleted = _events(EnqueueOn(_key, add=True, update=True, delete=True))
    assert added == [ObjectKey("team", "added")]
    assert updated == [ObjectKey("team", "new")]
    assert deleted == [ObjectKey("team", "deleted")]


@pytest.mark.parametrize(
    ("events", "queued"),
    [
        ({"add": True, "update": True}, (True, True, False)),
        ({"update": True, "delete": True}, (False, True, True)),
        ({"delete": True}, (False, False, True)),
    ],
)
def test_events_not_named_queue_nothing(
    events: dict[str, bool], queued: tuple[bool, bool, bool]
) -> None:
    handler: EnqueueOn[ConfigMap] = EnqueueOn(_key, **events)
    assert tuple(bool(keys) for keys in _events(handler)) == queued


def test_a_handler_for_no_event_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one of add, update or delete"):
        EnqueueOn(_key)


def test_repr_names_the_mapper_and_the_events() -> None:
    assert repr(EnqueueOn(_key, add=True, delete=True)) == "<EnqueueOn _key on add, delete>"
