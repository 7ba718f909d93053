"""Discovery documents (/api, /apis, aggregated discovery) and /version."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from ._registry import Registry, Resource
from ._subresources import describe

__all__ = ["Discovery"]

_AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_AGGREGATED_BETA = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

# The order apiextensions-apiserver lists a custom resource's verbs in.
_CUSTOM_RESOURCE_VERBS = (
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
)

# Where kube-apiserver 1.24 stores a resource when it is not the served version (its
# storageVersionHash names the stored group/version/kind): the groups whose preferred storage
# version is older, and resources stored with another group's (cohabiting events).
_STORED_AS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("policy", "poddisruptionbudgets"): ("policy", "v1beta1", "PodDisruptionBudget"),
    ("discovery.k8s.io", "endpointslices"): ("discovery.k8s.io", "v1beta1", "EndpointSlice"),
    ("autoscaling", "horizontalpodautoscalers"): (
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
    ),
    ("events.k8s.io", "events"): ("", "v1", "Event"),
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        "apiextensions.k8s.io",
        "v1beta1",
        "CustomResourceDefinition",
    ),
    ("storage.k8s.io", "csistoragecapacities"): ("storage.k8s.io", "v1beta1", "CSIStorageCapacity"),
}


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """kube's ``discovery.StorageVersionHash``: base64 of the first 8 bytes of the sha256 of
    the stored ``group/version/Kind``."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


class Discovery:
    """Builds every discovery document from the live :class:`Registry` (CRDs included)."""

    def __init__(self, registry: Registry, address: str = "127.0.0.1:0") -> None:
        self.registry = registry
        self.address = address

    def version(self) -> dict[str, Any]:
        return {
            "major": "1",
            "minor": "32",
            "gitVersion": "v1.32.0-kcm",
            "gitCommit": "kcm",
            "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "python",
            "compiler": "kcm",
            "platform": "linux/amd64",
        }

    def paths(self) -> list[str]:
        out = [
            "/api",
            "/api/v1",
            "/apis",
            "/healthz",
            "/livez",
            "/readyz",
            "/version",
            "/openapi/v2",
        ]
        for group, versions in self.registry.groups().items():
            if group:
                out.append(f"/apis/{group}")
                out.extend(f"/apis/{group}/{v}" for v in versions)
        return sorted(out)

    def api_versions(self) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": self.address}
            ],
        }

    def _group_doc(self, group: str, versions: list[str]) -> dict[str, Any]:
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}

    def group_list(self) -> dict[str, Any]:
        groups = [self._group_doc(g, vs) for g, vs in self.registry.groups().items() if g and vs]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def group(self, group: str) -> dict[str, Any] | None:
        versions = self.registry.groups().get(group)
        if not group or not versions:
            return None
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group_doc(group, versions)}

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        """``/api/v1`` or ``/apis/<group>/<version>``: an APIResourceList as 1.24 serves it
        (built-ins with an empty ``singularName``; the core list without ``apiVersion``)."""
        resources = self.registry.resources_in(group, version)
        if not resources:
            return None
        entries: list[dict[str, Any]] = []
        for r in resources:
            custom = r.crd is not None
            entry: dict[str, Any] = {
                "name": r.plural,
                "singularName": r.singular if custom else "",
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": list(_CUSTOM_RESOURCE_VERBS if custom else r.verbs),
            }
            if r.short_names:
                entry["shortNames"] = list(r.short_names)
            if r.categories:
                entry["categories"] = list(r.categories)
            if "watch" in r.verbs:  # stored in etcd (not bindings, reviews, componentstatuses)
                entry["storageVersionHash"] = storage_version_hash(*self._stored_as(r))
            entries.append(entry)
            entries.extend(_subresource_entry(r, sub) for sub in r.subresources)
        doc: dict[str, Any] = {"kind": "APIResourceList"}
        if group:
            doc["apiVersion"] = "v1"
        doc["groupVersion"] = f"{group}/{version}" if group else version
        doc["resources"] = entries
        return doc

    def _stored_as(self, res: Resource) -> tuple[str, str, str]:
        """The group, version and kind ``res`` is stored as (a CRD's storage version)."""
        stored = _STORED_AS.get((res.group, res.plural))
        if stored is not None:
            return stored
        if res.crd is not None:
            for other in self.registry.all:
                same = other.group == res.group and other.plural == res.plural
                if same and other.crd is not None and other.crd.get("storage"):
                    return res.group, other.version, res.kind
        return res.group, res.version, res.kind

    def aggregated(self, *, core: bool, accept: str) -> tuple[dict[str, Any], str]:
        """The aggregated discovery document (apidiscovery.k8s.io) and its content type."""
        beta = "v=v2beta1" in accept and "v=v2;" not in accept and not accept.endswith("v=v2")
        items = []
        for group, versions in self.registry.groups().items():
            if core != (group == ""):
                continue
            version_docs = []
            for v in versions:
                resources = []
                for r in self.registry.resources_in(group, v):
                    doc: dict[str, Any] = {
                        "resource": r.plural,
                        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
                        "scope": "Namespaced" if r.namespaced else "Cluster",
                        "singularResource": r.singular,
                        "verbs": list(r.verbs),
                    }
                    if r.short_names:
                        doc["shortNames"] = list(r.short_names)
                    if r.categories:
                        doc["categories"] = list(r.categories)
                    subs = []
                    for sub in r.subresources:
                        info = describe(r, sub)
                        kind = {
                            "group": r.group if info.group is None else info.group,
                            "version": r.version if info.version is None else info.version,
                            "kind": info.kind,
                        }
                        subs.append(
                            {"subresource": sub, "responseKind": kind, "verbs": list(info.verbs)}
                        )
                    if subs:
                        doc["subresources"] = subs
                    resources.append(doc)
                version_docs.append({"version": v, "resources": resources, "freshness": "Current"})
            items.append({"metadata": {"name": group} if group else {}, "versions": version_docs})
        api_version = "apidiscovery.k8s.io/v2beta1" if beta else "apidiscovery.k8s.io/v2"
        doc = {
            "kind": "APIGroupDiscoveryList",
            "apiVersion": api_version,
            "metadata": {},
            "items": items,
        }
        return doc, _AGGREGATED_BETA if beta else _AGGREGATED


def _subresource_entry(res: Resource, sub: str) -> dict[str, Any]:
    info = describe(res, sub)
    entry: dict[str, Any] = {
        "name": f"{res.plural}/{sub}",
        "singularName": "",
        "namespaced": res.namespaced,
        "kind": info.kind,
        "verbs": list(info.verbs),
    }
    if info.group is not None:
        entry["group"] = info.group
        entry["version"] = info.version
    return entry
