"""The one base class of every kcm model."""

import msgspec

__all__ = ["K8sStruct"]


class K8sStruct(
    msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel", frozen=True, gc=False
):
    """Base of every Kubernetes model.

    * ``kw_only``: fields are passed by name (``Pod(metadata=ObjectMeta(name="x"))``);
    * ``omit_defaults``: unset (``None``) fields are not encoded, like Go's ``omitempty``;
    * ``rename="camel"``: ``pod_ip`` is ``podIP`` on the wire (explicit names where camel-casing
      is not enough);
    * ``frozen``: a cached object cannot be changed in place; use ``msgspec.structs.replace``;
    * ``gc=False``: Kubernetes objects are trees (no reference cycles), so the cyclic garbage
      collector need not track millions of cached objects.

    Caveat: fields the model does not know are dropped on decode. Write with PATCH or
    server-side apply, never PUT a decoded object back (see docs/models.md).
    """
