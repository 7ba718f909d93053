"""Take a snapshot of a scenario's namespace and strip what differs between two correct
controller managers.

Kept: names (random suffixes replaced), labels, annotations, owner references (kind, name,
controller, blockOwnerDeletion), finalizers, whether a deletion started, ``spec`` (without the
pod template's spec, which is the API server's defaulting, not the controllers' doing),
``status`` (condition times dropped), a pod's phase and readiness (and the hostname,
subdomain and claim volumes a StatefulSet gives it), and events as (object, reason, type,
message) with their counts.

Replaced: ``pod-template-hash`` values and a DaemonSet's ``controller-revision-hash`` values by
``<hash-N>`` (numbered by the owning ReplicaSet's or ControllerRevision's revision, so "the
second ReplicaSet" is the same on both sides; kcm's template hash values differ from Go's by
design, while a StatefulSet's revision names are Go's byte for byte and kept), uids by
``<uid>``, times by ``<time>``, generated suffixes by ``<rand>``, the run's namespace (which
carries the recording's suffix) by ``<ns>``. A ControllerRevision's ``data`` loses its pod
template's spec, as workloads do. A scenario may ask for each pod's node (its ``nodeName``, or
the node its affinity pins it to: where a DaemonSet placed it).
Lists of objects are sorted by their normalised form, so two pods that differ only by their
random names compare equal as a multiset.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .certificates import certificate_summary

__all__ = [
    "CLUSTER_KINDS",
    "CLUSTER_RESOURCES",
    "RESOURCES",
    "SnapshotNormaliser",
    "list_path",
    "pinned_node",
]

RESOURCES: dict[str, str] = {
    "pods": "/api/v1",
    "services": "/api/v1",
    "endpoints": "/api/v1",
    "configmaps": "/api/v1",
    "persistentvolumeclaims": "/api/v1",
    "secrets": "/api/v1",
    "serviceaccounts": "/api/v1",
    "replicationcontrollers": "/api/v1",
    "events": "/api/v1",
    "deployments": "/apis/apps/v1",
    "replicasets": "/apis/apps/v1",
    "controllerrevisions": "/apis/apps/v1",
    "statefulsets": "/apis/apps/v1",
    "daemonsets": "/apis/apps/v1",
    "jobs": "/apis/batch/v1",
    "cronjobs": "/apis/batch/v1",
    "endpointslices": "/apis/discovery.k8s.io/v1",
    "poddisruptionbudgets": "/apis/policy/v1",
    "resourcequotas": "/api/v1",
    "horizontalpodautoscalers": "/apis/autoscaling/v2",
}
"""Plural -> API prefix of every namespaced resource a scenario may create or snapshot."""

CLUSTER_RESOURCES: dict[str, str] = {
    "certificatesigningrequests": "/apis/certificates.k8s.io/v1",
    "persistentvolumes": "/api/v1",
    "storageclasses": "/apis/storage.k8s.io/v1",
    "csidrivers": "/apis/storage.k8s.io/v1",
    "volumeattachments": "/apis/storage.k8s.io/v1",
}
"""Plural -> API prefix of the cluster-scoped resources a scenario may create and snapshot
(only the objects it created are listed, and they are deleted when it ends; the
VolumeAttachments listed are those of the PVs it created)."""

CLUSTER_KINDS: dict[str, str] = {
    "CertificateSigningRequest": "certificatesigningrequests",
    "PersistentVolume": "persistentvolumes",
    "StorageClass": "storageclasses",
    "CSIDriver": "csidrivers",
}
"""Kind -> plural of the cluster-scoped objects a scenario may create."""
_REQUESTER = ("username", "uid", "groups", "extra")
"""A CSR's requester: the harness's administrator, whose name differs between the two
servers (the API server fills it in; no controller decides it)."""

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
_DROP_META = {
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "generateName",
    "deletionGracePeriodSeconds",
}
_HASH_LABELS = ("pod-template-hash", "controller-revision-hash")
_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
"""Dropped: whether a sync still sees a new trigger depends on how pod changes within one
second fell into syncs (Go's tracker compares whole-second times)."""
_GENERATED = re.compile(r"[bcdfghjklmnpqrstvwxz2456789]{5}")
"""The random suffix the API server adds to ``generateName``; a name set explicitly beside a
``generateName`` (a StatefulSet's ``web-0``) is kept."""
_RESYNCED_EVENTS = "persistentvolume-controller"
"""Counted once: the PV binder repeats its events on every periodic resync
(``--pvclaimbinder-sync-period``, 15 s), whose phase relative to a scenario is arbitrary, so
two correct controller managers count them differently."""
_SCHEDULED = re.compile(r"-\d{8}\b")  # a CronJob's Job names end in its scheduled minute


def list_path(resource: str, namespace: str) -> str:
    if resource in CLUSTER_RESOURCES:
        return f"{CLUSTER_RESOURCES[resource]}/{resource}"
    return f"{RESOURCES[resource]}/namespaces/{namespace}/{resource}"


def pinned_node(pod: dict[str, Any]) -> str | None:
    """The node a pod is bound to, else the one its required node affinity pins it to by
    ``metadata.name`` (a DaemonSet's pods before a scheduler binds them)."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for expr in term.get("matchFields") or ():
            if expr.get("key") == "metadata.name" and expr.get("operator") == "In":
                values = expr.get("values") or []
                return str(values[0]) if len(values) == 1 else None
    return None


class SnapshotNormaliser:
    """One per scenario run: ``<hash-N>`` numbering is kept across the run's snapshots.

    Args:
        namespace: the run's namespace, replaced by ``<ns>`` in text.
        pod_nodes: keep each pod's node (:func:`pinned_node`) as ``node``.
    """

    def __init__(self, *, namespace: str = "", pod_nodes: bool = False) -> None:
        self._hashes: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._namespace = namespace
        self._pod_nodes = pod_nodes

    # -- learning ------------------------------------------------------------------------

    def learn(self, listed: dict[str, list[dict[str, Any]]]) -> None:
        """Number new pod-template hashes (by revision, then name) and note generated
        names."""
        owners = [
            *listed.get("replicasets", []),
            *(r for r in listed.get("controllerrevisions", []) if _owned_by_daemon_set(r)),
        ]

        def revision(obj: dict[str, Any]) -> tuple[int, str]:
            meta = obj.get("metadata", {})
            rev = (meta.get("annotations") or {}).get("deployment.kubernetes.io/revision")
            return (int(rev) if rev and rev.isdigit() else int(obj.get("revision") or 0), "")

        for obj in sorted(owners, key=revision):
            for label in _HASH_LABELS:
                value = (obj["metadata"].get("labels") or {}).get(label)
                if value and value not in self._hashes:
                    self._hashes[value] = f"<hash-{len(self._hashes) + 1}>"
        for objects in listed.values():
            for obj in objects:
                meta = obj.get("metadata", {})
                gen, name = meta.get("generateName"), meta.get("name")
                if gen and name and name.startswith(gen) and _GENERATED.fullmatch(name[len(gen) :]):
                    self._names[name] = gen + "<rand>"

    # -- normalising ---------------------------------------------------------------------

    def text(self, value: str) -> str:
        if self._namespace:
            value = value.replace(self._namespace, "<ns>")
        for name, placeholder in sorted(self._names.items(), key=lambda kv: -len(kv[0])):
            value = value.replace(name, placeholder)
        for hash_, placeholder in self._hashes.items():
            value = value.replace(hash_, placeholder)
        if self._namespace:
            value = value.replace(self._namespace, "<ns>")
        value = _TIME.sub("<time>", value)
        value = _SCHEDULED.sub("-<scheduled>", value)
        return _UUID.sub("<uid>", value)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):  # references carry the per-run namespace and an RV
            return {
                self.text(k): self.value(v)
                for k, v in value.items()
                if k not in ("namespace", "resourceVersion")
            }
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def object(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in obj.get("metadata", {}).items() if k not in _DROP_META}
        meta.pop("namespace", None)
        if _TRIGGER_TIME in (meta.get("annotations") or {}):
            meta["annotations"] = {
                k: v for k, v in meta["annotations"].items() if k != _TRIGGER_TIME
            } or None
            if meta["annotations"] is None:
                del meta["annotations"]
        if resource == "endpointslices":
            # how many writes a slice took (its generation) depends on whether a sync ran
            # between two steps of the script: changes close together are one write or two
            meta.pop("generation", None)
        if resource in ("secrets", "configmaps"):
            # a token and a cluster's CA differ between two clusters: keep which keys are set
            obj = {**obj, "data": _opaque_bytes(obj.get("data"))}
        if resource == "namespace":
            meta.pop("name", None)  # df-<scenario>[-suffix]
            meta.pop("labels", None)  # only kubernetes.io/metadata.name: the name again
        if meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = "<time>"
        refs = meta.get("ownerReferences")
        if refs:
            meta["ownerReferences"] = [{k: v for k, v in r.items() if k != "uid"} for r in refs]
        out: dict[str, Any] = {"metadata": meta}
        if resource == "pods":
            status = obj.get("status") or {}
            ready = any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in status.get("conditions") or ()
            )
            out["status"] = {"phase": status.get("phase"), "ready": ready}
            identity = _pod_identity(obj.get("spec") or {})
            if identity:
                out["spec"] = identity
            if self._pod_nodes:
                out["node"] = pinned_node(obj)
        else:
            for key, item in obj.items():
                if key not in ("metadata", "apiVersion", "kind"):
                    out[key] = item
            _drop_template_spec(out)
            _drop_condition_times(out.get("status"))
            if resource == "certificatesigningrequests":
                _summarise_certificate_request(out)
        normalised: dict[str, Any] = self.value(out)
        if resource == "endpointslices" and normalised.get("endpoints"):
            # a slice's endpoints are a set: Go fills slices in map order
            normalised["endpoints"] = sorted(
                normalised["endpoints"], key=lambda e: json.dumps(e, sort_keys=True)
            )
        if resource == "endpoints" and normalised.get("subsets"):
            # Go orders subsets by a hash that covers the pods' resourceVersions
            normalised["subsets"] = sorted(
                normalised["subsets"], key=lambda e: json.dumps(e, sort_keys=True)
            )
        return normalised

    def events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Events as (object kind and name, reason, type, message) with summed counts (the
        PV binder's counted once: :data:`_RESYNCED_EVENTS`)."""
        counts: dict[str, int] = {}
        for event in events:
            involved = event.get("involvedObject") or {}
            key = json.dumps(
                self.value(
                    {
                        "object": f"{involved.get('kind')}/{involved.get('name')}",
                        "reason": event.get("reason"),
                        "type": event.get("type"),
                        "message": event.get("message"),
                    }
                ),
                sort_keys=True,
            )
            if (event.get("source") or {}).get("component") == _RESYNCED_EVENTS:
                counts[key] = 1
            else:
                counts[key] = counts.get(key, 0) + int(event.get("count") or 1)
        return [dict(json.loads(k), count=n) for k, n in sorted(counts.items())]

    def snapshot(self, listed: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        listed = _without_generated_tokens(listed)
        self.learn(listed)
        out: dict[str, Any] = {}
        for resource, objects in listed.items():
            if resource == "events":
                out[resource] = self.events(objects)
            else:
                normalised = [self.object(resource, o) for o in objects]
                out[resource] = sorted(normalised, key=lambda o: json.dumps(o, sort_keys=True))
        return out


def _summarise_certificate_request(obj: dict[str, Any]) -> None:
    """A CSR without its requester (the harness's identity) and request bytes (the scenario's
    input), with its certificate summarised (the bytes differ on every signing)."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        for key in _REQUESTER:
            spec.pop(key, None)
        spec.pop("request", None)
    status = obj.get("status")
    if isinstance(status, dict) and status.get("certificate"):
        status["certificate"] = certificate_summary(status["certificate"])


_GENERATED_TOKEN = re.compile(r"(.+)-token-[a-z0-9]{5}")


def _without_generated_tokens(
    listed: dict[str, list[dict[str, Any]]],
) -> dict[str, list[dict[str, Any]]]:
    """Leave out the token Secret the 1.24-dev token controller makes for every ServiceAccount
    (``<account>-token-<rand>``, listed in the account's ``secrets``), and those references.
    Released 1.24 makes none by default (``LegacyServiceAccountTokenNoAutoGeneration``, beta and
    on; the snapshot the recordings come from predates the gate), nor does kcm: two correct
    managers differ here. Token Secrets a scenario creates itself are kept."""
    generated = set()
    for account in listed.get("serviceaccounts", ()):
        name = account.get("metadata", {}).get("name", "")
        for ref in account.get("secrets") or ():
            match = _GENERATED_TOKEN.fullmatch(ref.get("name", ""))
            if match and match.group(1) == name:
                generated.add(ref["name"])
    if not generated:
        return listed
    out = dict(listed)
    if "secrets" in out:
        out["secrets"] = [
            s for s in out["secrets"] if s.get("metadata", {}).get("name") not in generated
        ]
    out["serviceaccounts"] = []
    for account in listed["serviceaccounts"]:
        refs = [r for r in account.get("secrets") or () if r.get("name") not in generated]
        account = {k: v for k, v in account.items() if k != "secrets"}
        out["serviceaccounts"].append({**account, "secrets": refs} if refs else account)
    return out


_CLUSTER_BYTES = frozenset({"token", "ca.crt"})
"""Secret and ConfigMap keys whose values belong to one cluster (a signed token, its CA)."""


def _opaque_bytes(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    return {k: ("<bytes>" if k in _CLUSTER_BYTES and v else v) for k, v in data.items()}


def _owned_by_daemon_set(obj: dict[str, Any]) -> bool:
    """A DaemonSet's revisions carry kcm's template hash (numbered); a StatefulSet's are named
    with Go's revision hash, which kcm computes byte for byte (kept)."""
    refs = obj.get("metadata", {}).get("ownerReferences") or ()
    return any(r.get("kind") == "DaemonSet" for r in refs)


def _pod_identity(spec: dict[str, Any]) -> dict[str, Any]:
    """What a controller sets in a pod's spec beyond its template: a StatefulSet pod's hostname,
    subdomain and claim volumes (the rest of the spec is the template and server defaults)."""
    identity = {k: spec[k] for k in ("hostname", "subdomain") if k in spec}
    claims = [v for v in spec.get("volumes") or () if "persistentVolumeClaim" in v]
    if claims:
        identity["volumes"] = claims
    return identity


def _drop_template_spec(obj: dict[str, Any]) -> None:
    data = obj.get("data")
    if isinstance(data, dict):  # a ControllerRevision of a DaemonSet or StatefulSet
        _drop_template_spec(data)
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    template = spec.get("template")
    if isinstance(template, dict):
        template.pop("spec", None)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict):
        _drop_template_spec(job_template)


def _drop_condition_times(status: Any) -> None:
    """Drop condition times and order conditions by type (the order they were first set in
    depends on timing)."""
    if not isinstance(status, dict) or not status.get("conditions"):
        return
    for condition in status["conditions"]:
        for key in ("lastTransitionTime", "lastUpdateTime", "lastProbeTime"):
            condition.pop(key, None)
    status["conditions"] = sorted(status["conditions"], key=lambda c: str(c.get("type")))
