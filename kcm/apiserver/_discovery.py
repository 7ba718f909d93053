"""Discovery documents (/api, /apis, aggregated discovery) and /version."""

from __future__ import annotations

import hashlib
from typing import Any

from ._registry import Registry, Resource

__all__ = ["Discovery"]

_SUB_VERBS = ["get", "patch", "update"]
_AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_AGGREGATED_BETA = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"


def _hash(res: Resource) -> str:
    raw = f"{res.group}/{res.version}/{res.plural}".encode()
    return hashlib.sha256(raw).hexdigest()[:12]


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
        resources = self.registry.resources_in(group, version)
        if not resources:
            return None
        entries: list[dict[str, Any]] = []
        for r in resources:
            entry: dict[str, Any] = {
                "name": r.plural,
                "singularName": r.singular,
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": list(r.verbs),
            }
            if r.short_names:
                entry["shortNames"] = list(r.short_names)
            if r.categories:
                entry["categories"] = list(r.categories)
            entry["storageVersionHash"] = _hash(r)
            entries.append(entry)
            for sub in r.subresources:
                sub_entry: dict[str, Any] = {
                    "name": f"{r.plural}/{sub}",
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": r.kind,
                    "verbs": list(_SUB_VERBS),
                }
                if sub == "scale":
                    sub_entry.update(group="autoscaling", version="v1", kind="Scale")
                elif sub == "binding":
                    sub_entry.update(kind="Binding", verbs=["create"])
                elif sub == "eviction":
                    sub_entry.update(
                        group="policy", version="v1", kind="Eviction", verbs=["create"]
                    )
                elif sub == "finalize":
                    sub_entry.update(verbs=["update"])
                entries.append(sub_entry)
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": entries,
        }

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
                        kind = {"group": r.group, "version": r.version, "kind": r.kind}
                        verbs = list(_SUB_VERBS)
                        if sub == "scale":
                            kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
                        elif sub in ("binding", "eviction"):
                            verbs = ["create"]
                        subs.append({"subresource": sub, "responseKind": kind, "verbs": verbs})
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
