"""The ``coordination.k8s.io/v1`` Lease lock (the default, and the only one newer Kubernetes
accepts), plus the ConfigMap lock kept for migrations."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Generic, TypeVar, final

import msgspec

from kcm.models.coordination_v1 import Lease, LeaseSpec
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta

from ._record import LeaderElectionRecord, default_identity, utc

if TYPE_CHECKING:
    from kcm.client import Api, ApiClient

_Obj = TypeVar("_Obj", Lease, ConfigMap)

__all__ = ["LEADER_ANNOTATION", "ConfigMapLock", "LeaseLock"]

LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
"""The annotation in which ConfigMap (and Endpoints) locks keep the record as JSON."""


def _micro(value: datetime | None) -> str | None:
    return None if value is None else utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _seconds(value: datetime | None) -> str | None:
    return None if value is None else utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def _plain(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    value = utc(value)
    return datetime(
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
        tzinfo=value.tzinfo,
    )


def _not_initialized(kind: str) -> RuntimeError:
    return RuntimeError(f"{kind} lock not initialized: get() or create() must succeed first")


def record_from_lease_spec(spec: LeaseSpec | None) -> LeaderElectionRecord:
    """The election record stored in a Lease's spec."""
    spec = spec or LeaseSpec()
    return LeaderElectionRecord(
        holder_identity=spec.holder_identity or "",
        lease_duration_seconds=spec.lease_duration_seconds or 0,
        acquire_time=_plain(spec.acquire_time),
        renew_time=_plain(spec.renew_time),
        leader_transitions=spec.lease_transitions or 0,
    )


def lease_spec_from_record(
    record: LeaderElectionRecord, base: LeaseSpec | None = None
) -> LeaseSpec:
    """``record`` as a LeaseSpec, keeping fields of ``base`` the record does not cover.

    Timestamps become MicroTime (six fractional digits on the wire).
    """
    return msgspec.structs.replace(
        base or LeaseSpec(),
        holder_identity=record.holder_identity,
        lease_duration_seconds=record.lease_duration_seconds,
        acquire_time=record.acquire_time,
        renew_time=record.renew_time,
        lease_transitions=record.leader_transitions,
    )


def _lease_raw(record: LeaderElectionRecord) -> bytes:
    return msgspec.json.encode(
        {
            "holderIdentity": record.holder_identity,
            "leaseDurationSeconds": record.lease_duration_seconds,
            "acquireTime": _micro(record.acquire_time),
            "renewTime": _micro(record.renew_time),
            "leaderTransitions": record.leader_transitions,
        }
    )


def record_to_annotation(record: LeaderElectionRecord) -> str:
    """The record as client-go writes it into the leader annotation (``metav1.Time``)."""
    return msgspec.json.encode(
        {
            "holderIdentity": record.holder_identity,
            "leaseDurationSeconds": record.lease_duration_seconds,
            "acquireTime": _seconds(record.acquire_time),
            "renewTime": _seconds(record.renew_time),
            "leaderTransitions": record.leader_transitions,
        }
    ).decode()


def record_from_annotation(value: str) -> LeaderElectionRecord:
    """Parse the leader annotation; an unreadable value counts as an empty (released) record."""
    try:
        return msgspec.json.decode(value, type=LeaderElectionRecord)
    except msgspec.DecodeError:
        return LeaderElectionRecord()


class _ObjectLock(Generic[_Obj]):
    """What the Lease and ConfigMap locks share: the object handle, identity and events."""

    def __init__(
        self,
        api: Api[_Obj],
        name: str,
        namespace: str,
        identity: str | None,
        on_event: Callable[[str], object] | None,
    ) -> None:
        self._api: Api[_Obj] = api
        self._name = name
        self._namespace = namespace
        self._identity = identity or default_identity()
        self._on_event = on_event
        self._obj: _Obj | None = None

    @property
    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return f"{self._namespace}/{self._name}"

    def record_event(self, message: str) -> None:
        if self._on_event is not None:
            self._on_event(message)

    def _last(self, kind: str) -> _Obj:
        if self._obj is None:
            raise _not_initialized(kind)
        return self._obj


@final
class LeaseLock(_ObjectLock[Lease]):
    """A :class:`ResourceLock` on a ``coordination.k8s.io/v1`` Lease (L1, L4).

    Args:
        client: an open :class:`kcm.client.ApiClient` (the elector's deadlines cancel slow
            requests, but a client ``timeout`` of about ``renew_deadline / 2`` is advisable).
        name: the Lease's name, e.g. ``"kube-controller-manager"``.
        namespace: the Lease's namespace, e.g. ``"kube-system"``.
        identity: this process's holder identity (default :func:`default_identity`).
        on_event: called with leadership messages (hook an event recorder here).

    Every update is a patch from the Lease last read or written that carries its
    ``resourceVersion`` (:meth:`kcm.client.Api.update`): a concurrent write makes it fail with
    :class:`kcm.errors.Conflict`, and fields the record (or the model) does not cover are kept.
    """

    def __init__(
        self,
        client: ApiClient,
        name: str,
        namespace: str = "default",
        *,
        identity: str | None = None,
        on_event: Callable[[str], object] | None = None,
    ) -> None:
        super().__init__(
            client.api(Lease, namespace=namespace), name, namespace, identity, on_event
        )

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        lease = await self._api.get(self._name)
        self._obj = lease
        record = record_from_lease_spec(lease.spec)
        return record, _lease_raw(record)

    async def create(self, record: LeaderElectionRecord) -> None:
        lease = Lease(
            metadata=ObjectMeta(name=self._name, namespace=self._namespace),
            spec=lease_spec_from_record(record),
        )
        self._obj = await self._api.create(lease)

    async def update(self, record: LeaderElectionRecord) -> None:
        old = self._last("lease")
        new = msgspec.structs.replace(old, spec=lease_spec_from_record(record, old.spec))
        self._obj = await self._api.update(old, new)


@final
class ConfigMapLock(_ObjectLock[ConfigMap]):
    """A :class:`ResourceLock` in the ``control-plane.alpha.kubernetes.io/leader`` annotation
    of a ConfigMap (client-go's classic lock).

    Use it only to migrate from a ConfigMap-locked deployment (through :class:`MultiLock`);
    new deployments should use :class:`LeaseLock`. Arguments as for :class:`LeaseLock`.
    """

    def __init__(
        self,
        client: ApiClient,
        name: str,
        namespace: str = "default",
        *,
        identity: str | None = None,
        on_event: Callable[[str], object] | None = None,
    ) -> None:
        super().__init__(
            client.api(ConfigMap, namespace=namespace), name, namespace, identity, on_event
        )

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        cm = await self._api.get(self._name)
        self._obj = cm
        raw = (cm.metadata.annotations or {}).get(LEADER_ANNOTATION, "")
        record = record_from_annotation(raw) if raw else LeaderElectionRecord()
        return record, raw.encode()

    async def create(self, record: LeaderElectionRecord) -> None:
        cm = ConfigMap(
            metadata=ObjectMeta(
                name=self._name,
                namespace=self._namespace,
                annotations={LEADER_ANNOTATION: record_to_annotation(record)},
            )
        )
        self._obj = await self._api.create(cm)

    async def update(self, record: LeaderElectionRecord) -> None:
        old = self._last("configmap")
        annotations = dict(old.metadata.annotations or {})
        annotations[LEADER_ANNOTATION] = record_to_annotation(record)
        new = msgspec.structs.replace(
            old, metadata=msgspec.structs.replace(old.metadata, annotations=annotations)
        )
        self._obj = await self._api.update(old, new)
