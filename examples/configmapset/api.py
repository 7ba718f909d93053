"""The ConfigMapSet API: msgspec models for the custom resource, registered with kcm.

A ``ConfigMapSet`` (``examples.kcm.dev/v1alpha1``, namespaced) stamps a ConfigMap named after
the set, holding ``spec.data``, into every namespace matching ``spec.namespaceSelector``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import msgspec
import yaml

from kcm.models import Condition, K8sStruct, LabelSelector, ObjectMeta, ResourceInfo, register

__all__ = [
    "API_VERSION",
    "CONFIGMAPSETS",
    "FINALIZER",
    "GROUP",
    "KIND",
    "NAMESPACE_LABEL",
    "NAME_LABEL",
    "ConfigMapSet",
    "ConfigMapSetSpec",
    "ConfigMapSetStatus",
    "crd_manifest",
    "sample_manifests",
]

GROUP = "examples.kcm.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "ConfigMapSet"

FINALIZER = f"{GROUP}/cleanup"
"""Held by every live set, so its ConfigMaps in *other* namespaces are deleted before it goes."""
NAME_LABEL = f"configmapsets.{GROUP}/name"
NAMESPACE_LABEL = f"configmapsets.{GROUP}/namespace"
"""The two labels on every stamped ConfigMap: which set (namespace and name) it belongs to."""

CONFIGMAPSETS = ResourceInfo(
    group=GROUP,
    version=VERSION,
    kind=KIND,
    plural="configmapsets",
    namespaced=True,
    list_kind=f"{KIND}List",
    subresources=frozenset({"status"}),
    short_names=("cms",),
)

_HERE = Path(__file__).resolve().parent


class ConfigMapSetSpec(K8sStruct, frozen=True):
    """What to stamp and where."""

    data: dict[str, str] = msgspec.field(default_factory=dict)
    namespace_selector: LabelSelector | None = None
    """Namespaces to stamp into; absent or empty selects every namespace."""


class ConfigMapSetStatus(K8sStruct, frozen=True):
    """What the controller last achieved."""

    observed_generation: int | None = None
    namespace_count: int | None = None
    conditions: list[Condition] = msgspec.field(default_factory=list)


class ConfigMapSet(K8sStruct, frozen=True, tag_field="kind", tag=KIND):
    """The custom resource."""

    api_version: str = API_VERSION
    resource_info: ClassVar[ResourceInfo] = CONFIGMAPSETS
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ConfigMapSetSpec = msgspec.field(default_factory=ConfigMapSetSpec)
    status: ConfigMapSetStatus | None = None


register(ConfigMapSet)


def crd_manifest() -> dict[str, Any]:
    """The CustomResourceDefinition (``crd.yaml``) as a dict."""
    loaded: dict[str, Any] = yaml.safe_load((_HERE / "crd.yaml").read_text())
    return loaded


def sample_manifests() -> list[dict[str, Any]]:
    """The sample namespaces and ConfigMapSet (``sample.yaml``)."""
    return [doc for doc in yaml.safe_load_all((_HERE / "sample.yaml").read_text()) if doc]
