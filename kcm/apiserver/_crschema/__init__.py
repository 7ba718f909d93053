"""CustomResourceDefinition schemas: what kube-apiserver does with a CRD version's
``openAPIV3Schema`` (a structural schema, as a JSON dict).

- :mod:`.validation`: a custom resource against the schema (kube-openapi's validator, its
  messages turned into Status causes as apiextensions-apiserver does);
- :mod:`.pruning`: unknown fields dropped (not under ``x-kubernetes-preserve-unknown-fields``),
  and non-nullable nulls without a default;
- :mod:`.defaulting`: ``default`` values filled in (on create, update and read);
- :mod:`.objectmeta`: ``x-kubernetes-embedded-resource`` objects (and the root) keep only
  ObjectMeta's fields in ``metadata`` and need ``apiVersion`` and ``kind``;
- :mod:`.listtypes`: ``x-kubernetes-list-type`` ``set`` and ``map`` lists have no duplicates;
- :mod:`.structural`: the checks a CRD's schema must pass at create and update (structural,
  defaults that validate and are pruned).

Source: ``k8s.io/apiextensions-apiserver/pkg/apiserver/schema`` and
``k8s.io/kube-openapi/pkg/validation``.
"""

from .defaulting import default as default
from .listtypes import validate_list_types as validate_list_types
from .objectmeta import coerce_embedded as coerce_embedded
from .objectmeta import validate_embedded as validate_embedded
from .pruning import prune as prune
from .pruning import prune_nulls as prune_nulls
from .structural import validate_schema as validate_schema
from .validation import validate as validate

__all__ = [
    "coerce_embedded",
    "default",
    "prune",
    "prune_nulls",
    "validate",
    "validate_embedded",
    "validate_list_types",
    "validate_schema",
]
