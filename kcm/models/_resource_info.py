"""What the API server knows about one resource: group, version, kind, plural, scope, verbs."""

import msgspec

__all__ = ["ResourceInfo"]


class ResourceInfo(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One REST resource (``apps/v1 deployments``), as discovery describes it. Hashable.

    Attributes:
        group: API group, ``""`` for the core group.
        version: API version within the group (``v1``).
        kind: the kind of one object (``Deployment``).
        plural: the resource name in URLs (``deployments``).
        namespaced: whether objects live in a namespace.
        list_kind: the kind of a list response (``DeploymentList``).
        subresources: subresource names (``status``, ``scale``, ``log``, ...).
        short_names: kubectl short names (``deploy``).
        verbs: the verbs the resource supports (``get``, ``list``, ``watch``, ...).
        categories: discovery categories (``all``).
    """

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    list_kind: str = ""
    subresources: frozenset[str] = frozenset()
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = (
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    )
    categories: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        """``group/version``, or just ``version`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        """The singular resource name (lower-cased kind), as discovery reports it."""
        return self.kind.lower()

    def path(
        self,
        namespace: str | None = None,
        name: str | None = None,
        subresource: str | None = None,
    ) -> str:
        """The REST path of the collection, one object, or one object's subresource.

        ``namespace=None`` on a namespaced resource gives the all-namespaces collection path.

        Raises:
            ValueError: a namespace was given for a cluster-scoped resource, or a subresource
                without a name.
        """
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace is not None and namespace != "":
            if not self.namespaced:
                raise ValueError(
                    f"{self.plural}.{self.group or 'core'} is cluster-scoped; "
                    f"do not pass namespace={namespace!r}"
                )
            prefix = f"{prefix}/namespaces/{namespace}"
        path = f"{prefix}/{self.plural}"
        if name is not None:
            path = f"{path}/{name}"
        if subresource is not None:
            if name is None:
                raise ValueError(f"subresource {subresource!r} needs an object name")
            path = f"{path}/{subresource}"
        return path
