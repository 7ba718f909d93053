"""Build CustomResourceDefinition manifests for tests without 30 lines of nested dicts."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["crd_manifest"]


def crd_manifest(
    *,
    group: str,
    kind: str,
    plural: str | None = None,
    version: str = "v1",
    scope: Literal["Namespaced", "Cluster"] = "Namespaced",
    status: bool = False,
    scale: tuple[str, str] | None = None,
    schema: dict[str, Any] | None = None,
    short_names: tuple[str, ...] = (),
) -> dict[str, Any]:
    """An ``apiextensions.k8s.io/v1`` CustomResourceDefinition as a dict, ready to create.

    Args:
        group: the API group, e.g. ``"example.com"``.
        kind: the kind, e.g. ``"Widget"``; ``singular`` is its lowercase form.
        plural: the resource name; default ``kind.lower() + "s"``.
        version: the one served and stored version.
        scope: ``"Namespaced"`` or ``"Cluster"``.
        status: declare the ``status`` subresource.
        scale: ``(spec_replicas_path, status_replicas_path)`` to declare the ``scale``
            subresource, e.g. ``(".spec.replicas", ".status.replicas")``.
        schema: the ``openAPIV3Schema``; default an object that keeps unknown fields.
        short_names: kubectl short names.

    Example::

        crd = crd_manifest(group="example.com", kind="Widget", status=True)
        await client.api(CustomResourceDefinition).create(from_dict(CustomResourceDefinition, crd))
    """
    plural = plural or f"{kind.lower()}s"
    names: dict[str, Any] = {"plural": plural, "singular": kind.lower(), "kind": kind}
    if short_names:
        names["shortNames"] = list(short_names)
    served: dict[str, Any] = {
        "name": version,
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": schema
            or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        },
    }
    subresources: dict[str, Any] = {}
    if status:
        subresources["status"] = {}
    if scale is not None:
        subresources["scale"] = {"specReplicasPath": scale[0], "statusReplicasPath": scale[1]}
    if subresources:
        served["subresources"] = subresources
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope, "names": names, "versions": [served]},
    }
