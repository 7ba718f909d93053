"""``ApiClient.api`` hands out one stateless handle per (model, namespace, resource)."""

from __future__ import annotations

import pytest

from kcm.client import ApiClient, ClientConfig
from kcm.models import PartialObjectMetadata, resource_info_for
from kcm.models.core_v1 import ConfigMap, Pod


def test_the_same_arguments_give_the_same_handle() -> None:
    client = ApiClient(ClientConfig(server="https://127.0.0.1:6443"))
    pods = client.api(Pod, "a")
    assert client.api(Pod, "a") is pods
    assert client.api(Pod, "b") is not pods
    assert client.api(Pod, "b").namespace == "b"
    assert client.api(ConfigMap, "a").model is ConfigMap
    info = resource_info_for(Pod)
    meta = client.api(PartialObjectMetadata, "a", resource=info)
    assert client.api(PartialObjectMetadata, "a", resource=info) is meta
    assert meta is not pods


def test_a_model_without_resource_information_still_raises() -> None:
    client = ApiClient(ClientConfig(server="https://127.0.0.1:6443"))
    with pytest.raises(ValueError, match="has no ResourceInfo"):
        client.api(PartialObjectMetadata)
    with pytest.raises(ValueError, match="has no ResourceInfo"):
        client.api(PartialObjectMetadata)
