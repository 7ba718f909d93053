"""namespace_keys: the cluster-scoped key of the namespace an object lives in."""

from __future__ import annotations

from kcm.controllerkit import namespace_keys
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap, ServiceAccount
from kcm.models.meta_v1 import ObjectMeta


def test_the_key_is_the_namespace_of_the_object() -> None:
    account = ServiceAccount(metadata=ObjectMeta(name="default", namespace="team"))
    assert namespace_keys(account) == (ObjectKey("", "team"),)


def test_an_object_without_a_namespace_maps_to_the_empty_name() -> None:
    assert namespace_keys(ConfigMap(metadata=ObjectMeta(name="x"))) == (ObjectKey("", ""),)
