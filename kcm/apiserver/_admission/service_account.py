"""``ServiceAccount``: a pod runs as an account that exists, and gets its API token volume.

A pod without ``serviceAccountName`` runs as ``default``; naming an account that does not exist
is a 403. Unless the pod or the account opts out (``automountServiceAccountToken: false``),
every container and init container mounts a projected volume ``kube-api-access-<5 random>``
(a bound token, the cluster CA from the ``kube-root-ca.crt`` ConfigMap and the namespace) at
``/var/run/secrets/kubernetes.io/serviceaccount``, as 1.24 writes it. The account's
``imagePullSecrets`` become the pod's if it has none.
"""

from __future__ import annotations

from typing import Any, Final

from .._names import generate_name
from .._status import StatusError
from .._store import Obj, Store
from ._plugin import Attributes, Plugin

__all__ = ["ServiceAccount", "admit"]

_MOUNT_PATH: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
_VOLUME_PREFIX: Final = "kube-api-access-"
_MIRROR_POD: Final = "kubernetes.io/config.mirror"


def _token_volume(name: str) -> Obj:
    return {
        "name": name,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
            "defaultMode": 420,
        },
    }


def _mounts_token(spec: Obj, account: Obj) -> bool:
    """The pod's choice wins, then the account's; mounting is the default."""
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if account.get("automountServiceAccountToken") is not None:
        return bool(account["automountServiceAccountToken"])
    return True


def _mount_token(spec: Obj) -> None:
    volumes: list[Any] = spec.get("volumes") or []
    existing = next(
        (v["name"] for v in volumes if str(v.get("name", "")).startswith(_VOLUME_PREFIX)), None
    )
    volume_name = existing or generate_name(_VOLUME_PREFIX)
    needed = False
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            mounts = container.setdefault("volumeMounts", [])
            if any(m.get("mountPath") == _MOUNT_PATH for m in mounts):
                continue
            mounts.append({"name": volume_name, "readOnly": True, "mountPath": _MOUNT_PATH})
            needed = True
    if needed and existing is None:
        spec["volumes"] = [*volumes, _token_volume(volume_name)]


def admit(store: Store, ns: str, pod: Obj) -> None:
    """Set the pod's account and mount its token (mirror pods are left alone).

    Raises:
        StatusError: 403 when the account does not exist.
    """
    meta = pod["metadata"]
    if _MIRROR_POD in (meta.get("annotations") or {}):
        return
    spec = pod.setdefault("spec", {})
    if not spec.get("serviceAccountName"):  # the deprecated alias, else the default account
        spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
    name = spec["serviceAccountName"]
    account = store.get(("", "serviceaccounts"), ns, name)
    if account is None:
        raise StatusError.forbidden(
            "",
            "pods",
            meta.get("name") or "",
            f'error looking up service account {ns}/{name}: serviceaccount "{name}" not found',
        )
    if _mounts_token(spec, account):
        _mount_token(spec)
    if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [
            {"name": s.get("name", "")} for s in account["imagePullSecrets"] if isinstance(s, dict)
        ]


class ServiceAccount(Plugin):
    """The plugin: pod creates."""

    name = "ServiceAccount"

    def admit(self, a: Attributes) -> None:
        if a.operation == "CREATE" and a.is_pod:
            admit(a.store, a.namespace, a.obj)
