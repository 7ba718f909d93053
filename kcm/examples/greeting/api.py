"""Tutorial step 2: the ``Greeting`` custom resource as a typed model, and its CRD.

A ``Greeting`` (``tutorial.kcm.dev/v1``, namespaced) names someone to greet in ``spec.name``;
its controller writes the greeting into a ConfigMap and reports it in ``status.message``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from kcm.models import K8sStruct, ObjectMeta, ResourceInfo, register

__all__ = ["GREETINGS", "Greeting", "GreetingSpec", "GreetingStatus", "crd_manifest"]

GREETINGS = ResourceInfo(
    group="tutorial.kcm.dev",
    version="v1",
    kind="Greeting",
    plural="greetings",
    namespaced=True,
    list_kind="GreetingList",
    subresources=frozenset({"status"}),
)
"""Where the resource lives in the API: what the client builds its URLs from."""


class GreetingSpec(K8sStruct, frozen=True):
    """What the user asks for."""

    name: str = "world"
    """Who to greet."""


class GreetingStatus(K8sStruct, frozen=True):
    """What the controller did, for ``kubectl get greetings``."""

    message: str | None = None
    observed_generation: int | None = None


class Greeting(K8sStruct, frozen=True, tag_field="kind", tag="Greeting"):
    """The custom resource. Models are frozen: change one with ``msgspec.structs.replace``."""

    api_version: str = "tutorial.kcm.dev/v1"
    resource_info: ClassVar[ResourceInfo] = GREETINGS
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: GreetingSpec = msgspec.field(default_factory=GreetingSpec)
    status: GreetingStatus | None = None


register(Greeting)  # the client, informers and decoders now know the kind


def crd_manifest() -> dict[str, Any]:
    """The CustomResourceDefinition that serves ``greetings.tutorial.kcm.dev``."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"name": {"type": "string"}}},
            "status": {
                "type": "object",
                "properties": {
                    "message": {"type": "string"},
                    "observedGeneration": {"type": "integer"},
                },
            },
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "greetings.tutorial.kcm.dev"},
        "spec": {
            "group": "tutorial.kcm.dev",
            "scope": "Namespaced",
            "names": {
                "plural": "greetings",
                "singular": "greeting",
                "kind": "Greeting",
                "listKind": "GreetingList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": schema},
                    "additionalPrinterColumns": [
                        {"name": "Message", "type": "string", "jsonPath": ".status.message"}
                    ],
                }
            ],
        },
    }
