"""What each REST verb does to stored objects: kube-apiserver's generic registry, in miniature.

Plain synchronous methods over the :class:`Store`; the ASGI layer parses requests and calls these.
Every failure is a :class:`StatusError` carrying the Status kube-apiserver would send.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
import uuid
from datetime import datetime, timedelta
from typing import Any

import msgspec
import yaml

from kcm.clock import Clock

from ._apply import ApplyConflict, apply_ssa, track_update
from ._patch import PatchError, apply_json_patch, apply_merge_patch
from ._registry import Registry, Resource
from ._select import build_matcher
from ._status import StatusError, status_success
from ._store import HistoryExpired, Obj, Store, deep_copy
from ._strategic import apply_strategic_merge_patch
from ._validation import generate_name, validate_create, validate_update

__all__ = ["Rest", "format_time"]

_TOP_LEVEL_SKIP = ("metadata", "status", "apiVersion", "kind")
# kinds whose status is reset on create (the strategy's PrepareForCreate); Node keeps its status
_GENERATE_NAME_DRAWS = 8
"""How many names a ``generateName`` create tries before AlreadyExists (kube's 1 + 7 retries)."""

_KEEP_STATUS_ON_CREATE = {("", "Node"), ("", "PersistentVolume")}
_RETURN_DELETED = {("", "pods"), ("", "namespaces"), ("", "services")}


def format_time(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _spec_part(obj: Obj) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in _TOP_LEVEL_SKIP}


class Rest:
    """The verbs. ``clock`` stamps creationTimestamp, deletionTimestamp and managedFields."""

    def __init__(self, store: Store, registry: Registry, clock: Clock) -> None:
        self.store = store
        self.registry = registry
        self.clock = clock
        self._next_ip = 1
        self._next_node_port = 30000

    def now(self) -> str:
        return format_time(self.clock.now())

    # -- helpers ---------------------------------------------------------------------------

    def _existing(self, res: Resource, ns: str, name: str) -> Obj:
        obj = self.store.get(res.storage_key, ns, name)
        if obj is None:
            raise StatusError.not_found(res.group, res.plural, name)
        return obj

    def present(self, res: Resource, obj: Obj) -> Obj:
        """The object as served under ``res``'s version (custom resources keep one storage)."""
        if res.crd is not None and obj.get("apiVersion") != res.api_version:
            obj = dict(obj)
            obj["apiVersion"] = res.api_version
        return obj

    def _check_namespace(self, res: Resource, ns: str, name: str) -> None:
        if not res.namespaced:
            return
        nsobj = self.store.get(("", "namespaces"), "", ns)
        if nsobj is None:
            raise StatusError.not_found("", "namespaces", ns)
        if nsobj.get("metadata", {}).get("deletionTimestamp") or (
            nsobj.get("status", {}).get("phase") == "Terminating"
        ):
            why = f"unable to create new content in namespace {ns} because it is being terminated"
            raise StatusError.forbidden(
                res.group,
                res.plural,
                name,
                why,
                causes=[
                    {
                        "reason": "NamespaceTerminating",
                        "message": f"namespace {ns} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )

    def _check_type(self, res: Resource, body: Any) -> Obj:
        if not isinstance(body, dict):
            raise StatusError.bad_request("the body of the request must be a JSON object")
        kind = body.get("kind")
        api_version = body.get("apiVersion")
        if kind and kind != res.kind:
            raise StatusError.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({res.api_version})"
                if api_version and api_version != res.api_version
                else f"the kind in the data ({kind}) does not match the expected kind ({res.kind})"
            )
        if api_version and api_version != res.api_version:
            raise StatusError.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({res.api_version})"
            )
        body["kind"] = res.kind
        body["apiVersion"] = res.api_version
        meta = body.get("metadata")
        if meta is None:
            body["metadata"] = meta = {}
        if not isinstance(meta, dict):
            raise StatusError.bad_request("metadata must be an object")
        return body

    def _generation(self, res: Resource, new: Obj, old: Obj) -> None:
        meta = new["metadata"]
        gen = int(old["metadata"].get("generation") or 1)
        if _spec_part(new) != _spec_part(old) or (
            meta.get("deletionTimestamp") and not old["metadata"].get("deletionTimestamp")
        ):
            gen += 1
        meta["generation"] = gen

    def _track(self, old: Obj | None, new: Obj, manager: str, operation: str) -> Obj:
        if not manager or operation == "Apply":
            return new
        return track_update(
            old, new, manager=manager, operation=operation, now=self.now(), kind=new.get("kind")
        )

    def _validate(self, res: Resource, obj: Obj, old: Obj | None = None) -> None:
        name = obj["metadata"].get("name", "")
        causes: builtins.list[dict[str, Any]] = [
            dict(c)
            for c in (validate_create(obj, res) if old is None else validate_update(old, obj, res))
        ]
        if res.crd is None and res.plural == "customresourcedefinitions":
            causes += self._crd_causes(obj)
        if causes:
            raise StatusError.invalid(res.group, res.kind, name, causes)

    # -- get / list ------------------------------------------------------------------------

    def get(self, res: Resource, ns: str, name: str) -> Obj:
        return self.present(res, self._existing(res, ns, name))

    def list(self, res: Resource, ns: str | None, query: dict[str, str]) -> Obj:
        matcher = build_matcher(res, query.get("labelSelector", ""), query.get("fieldSelector", ""))
        limit = _int_param(query, "limit")
        rv_param = query.get("resourceVersion", "")
        match = query.get("resourceVersionMatch", "")
        cont = query.get("continue", "")
        start: tuple[str, str] | None = None
        store = self.store
        if match and not rv_param:
            raise StatusError.invalid(
                "meta.k8s.io",
                "ListOptions",
                "",
                [
                    {
                        "reason": "FieldValueForbidden",
                        "message": "Forbidden: resourceVersionMatch is forbidden unless "
                        "resourceVersion is provided",
                        "field": "resourceVersionMatch",
                    }
                ],
            )
        if cont:
            at, start = _decode_continue(cont)
            snapshot = self._snapshot(res, at, continuing=True)
        elif rv_param not in ("", "0"):
            try:
                at = int(rv_param)
            except ValueError as exc:
                raise StatusError.bad_request(f"invalid resource version: {rv_param}") from exc
            if at > store.rv:
                raise _too_large(at, store.rv)
            if match == "Exact" or (not match and limit):
                snapshot = self._snapshot(res, at, continuing=False)
            else:
                at = store.rv
                snapshot = store.objects.get(res.storage_key, {})
        else:
            at = store.rv
            snapshot = store.objects.get(res.storage_key, {})
        keys = sorted(snapshot)
        items: builtins.list[Obj] = []
        next_key: tuple[str, str] | None = None
        remaining = 0
        for key in keys:
            if start is not None and key <= start:
                continue
            if ns is not None and key[0] != ns:
                continue
            obj = snapshot[key]
            if matcher is not None and not matcher(obj):
                continue
            if limit and len(items) >= limit:
                if next_key is None:
                    next_key = (
                        items[-1]["metadata"].get("namespace", ""),
                        items[-1]["metadata"]["name"],
                    )
                remaining += 1
                continue
            items.append(self.present(res, obj))
        meta: dict[str, Any] = {"resourceVersion": str(at)}
        if next_key is not None:
            meta["continue"] = _encode_continue(at, next_key)
            if matcher is None:
                meta["remainingItemCount"] = remaining
        return {
            "kind": res.list_kind,
            "apiVersion": res.api_version,
            "metadata": meta,
            "items": items,
        }

    def _snapshot(self, res: Resource, at: int, *, continuing: bool) -> dict[tuple[str, str], Obj]:
        try:
            return self.store.snapshot(res.storage_key, at)
        except HistoryExpired as exc:
            if continuing:
                raise StatusError.gone(
                    "The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter, or use "
                    "the continue token in this response to retrieve the remainder of the "
                    "results. Continuing with the provided token results in an inconsistent "
                    "list - objects that were created, modified, or deleted between the time "
                    "the first chunk was returned and now may show up in the list."
                ) from exc
            raise StatusError.gone(str(exc)) from exc

    # -- create ----------------------------------------------------------------------------

    def create(
        self, res: Resource, ns: str | None, body: Any, query: dict[str, str], *, manager: str = ""
    ) -> Obj:
        obj = self._check_type(res, body)
        meta = obj["metadata"]
        if res.namespaced:
            assert ns is not None
            if meta.get("namespace") and meta["namespace"] != ns:
                raise StatusError.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = self._free_generated_name(res, meta)
            else:
                raise StatusError.invalid(
                    res.group,
                    res.kind,
                    "",
                    [
                        {
                            "reason": "FieldValueRequired",
                            "message": "Required value: name or generateName is required",
                            "field": "metadata.name",
                        }
                    ],
                )
        name = meta["name"]
        self._validate(res, obj)
        self._check_namespace(res, ns or "", name)
        if self.store.get(res.storage_key, meta.get("namespace", ""), name) is not None:
            raise StatusError.already_exists(res.group, res.plural, name)
        self._prepare_create(res, obj)
        obj = self._track(None, obj, manager, "Update")
        if query.get("dryRun"):
            return obj
        created = self.store.create(res.storage_key, obj)
        self._after_write(res, created)
        return self.present(res, created)

    def _free_generated_name(self, res: Resource, meta: Obj) -> str:
        """A name from ``generateName``, drawn again while it is taken (kube-apiserver's
        RetryGenerateName: up to 8 draws; a name still taken then answers AlreadyExists).
        Five random characters (27^5 names) collide in about one of a hundred 500-pod
        ReplicaSets."""
        name = generate_name(meta["generateName"])
        for _ in range(_GENERATE_NAME_DRAWS - 1):
            if self.store.get(res.storage_key, meta.get("namespace", ""), name) is None:
                break
            name = generate_name(meta["generateName"])
        return name

    def _prepare_create(self, res: Resource, obj: Obj) -> None:
        meta = obj["metadata"]
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = self.now()
        meta["generation"] = 1
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(field, None)
        meta.pop("resourceVersion", None)
        if res.has_status and (res.group, res.kind) not in _KEEP_STATUS_ON_CREATE:
            obj.pop("status", None)
        key = (res.group, res.plural)
        self._default_templates(res, obj)
        if key == ("", "namespaces"):
            obj.setdefault("spec", {})
            obj["spec"].setdefault("finalizers", ["kubernetes"])
            obj["status"] = {"phase": "Active"}
            labels = meta.setdefault("labels", {})
            labels["kubernetes.io/metadata.name"] = meta["name"]
        elif key == ("", "pods"):
            obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
            spec = obj.setdefault("spec", {})
            _default_pod_spec(spec)
            spec.setdefault("serviceAccountName", "default")
            spec.setdefault("enableServiceLinks", True)
        elif key == ("batch", "jobs"):
            spec = obj.setdefault("spec", {})
            if spec.get("completions") is None and spec.get("parallelism") is None:
                spec["completions"] = 1
            spec.setdefault("parallelism", 1)
            spec.setdefault("backoffLimit", 6)
            spec.setdefault("completionMode", "NonIndexed")
            spec.setdefault("suspend", False)
            if not spec.get("manualSelector"):
                # kube-apiserver generates the selector from the uid and labels the template
                generated = {
                    "batch.kubernetes.io/controller-uid": meta["uid"],
                    "batch.kubernetes.io/job-name": meta["name"],
                    "controller-uid": meta["uid"],
                    "job-name": meta["name"],
                }
                spec["selector"] = {
                    "matchLabels": {"batch.kubernetes.io/controller-uid": meta["uid"]}
                }
                template = spec.setdefault("template", {})
                tmeta = template.setdefault("metadata", {})
                tmeta["labels"] = {**(tmeta.get("labels") or {}), **generated}
        elif key == ("", "secrets"):
            if not obj.get("type"):
                obj["type"] = "Opaque"
        elif key == ("", "services"):
            spec = obj.setdefault("spec", {})
            spec.setdefault("type", "ClusterIP")
            spec.setdefault("sessionAffinity", "None")
            if spec["type"] != "ExternalName" and not spec.get("clusterIP"):
                ip = f"10.96.{self._next_ip // 254}.{self._next_ip % 254 + 1}"
                self._next_ip += 1
                spec["clusterIP"] = ip
                spec["clusterIPs"] = [ip]
            node_ports = spec["type"] in ("NodePort", "LoadBalancer")
            for port in spec.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
                    port.setdefault("targetPort", port.get("port"))
                    if node_ports and not port.get("nodePort"):
                        port["nodePort"] = self._next_node_port
                        self._next_node_port = 30000 + (self._next_node_port - 29999) % 2768
            if node_ports:
                spec.setdefault("externalTrafficPolicy", "Cluster")
            obj["status"] = {"loadBalancer": {}}
        elif key == ("apps", "deployments"):
            spec = obj.setdefault("spec", {})
            spec.setdefault("replicas", 1)
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("progressDeadlineSeconds", 600)
            strategy = spec.setdefault("strategy", {})
            if not strategy.get("type"):
                strategy["type"] = "RollingUpdate"
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.setdefault("rollingUpdate", {})
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
        elif key in (
            ("apps", "replicasets"),
            ("apps", "statefulsets"),
            ("", "replicationcontrollers"),
        ):
            obj.setdefault("spec", {}).setdefault("replicas", 1)
        elif key == ("apiextensions.k8s.io", "customresourcedefinitions"):
            spec = obj.get("spec") or {}
            for version in spec.get("versions") or []:
                if isinstance(version, dict):
                    version.setdefault("served", True)
            names = dict(spec.get("names") or {})
            names.setdefault("singular", names.get("kind", "").lower())
            names.setdefault("listKind", f"{names.get('kind', '')}List")
            obj["status"] = {
                "acceptedNames": names,
                "conditions": [
                    {
                        "type": "NamesAccepted",
                        "status": "True",
                        "reason": "NoConflicts",
                        "message": "no conflicts found",
                        "lastTransitionTime": self.now(),
                    },
                    {
                        "type": "Established",
                        "status": "True",
                        "reason": "InitialNamesAccepted",
                        "message": "the initial names have been accepted",
                        "lastTransitionTime": self.now(),
                    },
                ],
                "storedVersions": [
                    v.get("name") for v in spec.get("versions") or [] if v.get("storage")
                ],
            }

    @staticmethod
    def _default_templates(res: Resource, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict) or res.crd is not None:
            return
        template = spec.get("template")
        if res.kind == "CronJob":
            job_template = spec.get("jobTemplate")
            job_spec = job_template.get("spec") if isinstance(job_template, dict) else None
            template = job_spec.get("template") if isinstance(job_spec, dict) else None
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            restart = "Never" if res.kind in ("Job", "CronJob") else "Always"
            template["spec"].setdefault("restartPolicy", restart)
            _default_pod_spec(template["spec"])

    def _crd_causes(self, obj: Obj) -> builtins.list[dict[str, Any]]:
        spec = obj.get("spec") or {}
        names = spec.get("names") or {}
        causes: builtins.list[dict[str, Any]] = []
        expected = f"{names.get('plural', '')}.{spec.get('group', '')}"
        if obj["metadata"].get("name") != expected:
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "message": f'Invalid value: "{obj["metadata"].get("name")}": must be '
                    'spec.names.plural+"."+spec.group',
                    "field": "metadata.name",
                }
            )
        if not names.get("kind") or not names.get("plural"):
            causes.append(
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value",
                    "field": "spec.names.kind" if not names.get("kind") else "spec.names.plural",
                }
            )
        versions = spec.get("versions") or []
        if not versions:
            causes.append(
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value",
                    "field": "spec.versions",
                }
            )
        elif sum(1 for v in versions if v.get("storage")) != 1:
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: must have exactly one version marked as storage "
                    "version",
                    "field": "spec.versions",
                }
            )
        return causes

    def _after_write(self, res: Resource, obj: Obj) -> None:
        if res.plural == "customresourcedefinitions" and res.group == "apiextensions.k8s.io":
            self.registry.set_crd(obj)

    # -- update ----------------------------------------------------------------------------

    def update(
        self,
        res: Resource,
        ns: str,
        name: str,
        body: Any,
        query: dict[str, str],
        *,
        subresource: str = "",
        manager: str = "",
        operation: str = "Update",
        old: Obj | None = None,
    ) -> Obj:
        if subresource == "scale":
            return self._update_scale(res, ns, name, body, query, manager=manager)
        old = old if old is not None else self._existing(res, ns, name)
        new = self._check_type(res, body)
        meta = new["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise StatusError.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL "
                f"({name})"
            )
        if res.namespaced and meta.get("namespace") and meta["namespace"] != ns:
            raise StatusError.bad_request(
                "the namespace of the provided object does not match the namespace sent on the "
                "request"
            )
        old_meta = old["metadata"]
        rv = meta.get("resourceVersion")
        if rv and rv != old_meta.get("resourceVersion"):
            raise StatusError.stale(res.group, res.plural, name)
        if meta.get("uid") and meta["uid"] != old_meta.get("uid"):
            raise StatusError.conflict(
                res.group,
                res.plural,
                name,
                f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: "
                f"{old_meta.get('uid')}",
            )
        if subresource in ("status", "finalize"):
            merged = deep_copy(old)
            if subresource == "status":
                if "status" in new:
                    merged["status"] = new["status"]
                else:
                    merged.pop("status", None)
            else:
                merged.setdefault("spec", {})["finalizers"] = list(
                    (new.get("spec") or {}).get("finalizers") or []
                )
            new = merged
            meta = new["metadata"]
        else:
            if res.has_status:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            if (res.group, res.plural) == ("", "namespaces"):
                new["spec"] = old.get("spec", {})
        for key in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "namespace",
            "name",
            "generateName",
        ):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        if old_meta.get("deletionTimestamp"):
            # finalizers may only be removed while deleting
            added = set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ())
            if added:
                raise StatusError.forbidden(
                    res.group,
                    res.plural,
                    name,
                    "no new finalizers can be added if the object is being deleted, found new "
                    f"finalizers {sorted(added)}",
                )
        meta["resourceVersion"] = old_meta.get("resourceVersion")
        self._generation(res, new, old)
        if "managedFields" not in meta and "managedFields" in old_meta:
            meta["managedFields"] = old_meta["managedFields"]
        if subresource == "":
            self._default_templates(res, new)
            if _spec_part(new) != _spec_part(old):
                self._validate(res, new, old)
        new = self._track(old, new, manager, operation)
        if new == old:
            return self.present(res, old)  # no-op: kube-apiserver skips the write
        if query.get("dryRun"):
            return new
        if self._deletion_complete(res, new):
            final = self.store.delete(res.storage_key, new, old)
            self._after_delete(res, final)
            return self.present(res, final)
        updated = self.store.update(res.storage_key, new, old)
        self._after_write(res, updated)
        return self.present(res, updated)

    def _deletion_complete(self, res: Resource, obj: Obj) -> bool:
        meta = obj["metadata"]
        if not meta.get("deletionTimestamp") or meta.get("finalizers"):
            return False
        if (res.group, res.plural) == ("", "namespaces"):
            return not (obj.get("spec") or {}).get("finalizers")
        # the kubelet finishes graceful pod deletion
        return not (
            (res.group, res.plural) == ("", "pods") and meta.get("deletionGracePeriodSeconds")
        )

    def _after_delete(self, res: Resource, obj: Obj) -> None:
        if res.plural == "customresourcedefinitions" and res.group == "apiextensions.k8s.io":
            spec = obj.get("spec") or {}
            plural = (spec.get("names") or {}).get("plural", "")
            bucket = self.store.objects.get((spec.get("group", ""), plural), {})
            cr_res = self.registry.by_storage(spec.get("group", ""), plural)
            if cr_res is not None:
                for cr in list(bucket.values()):
                    self.store.delete(cr_res.storage_key, deep_copy(cr), cr)
            self.registry.drop_crd(obj["metadata"]["name"])

    # -- scale -----------------------------------------------------------------------------

    def get_scale(self, res: Resource, ns: str, name: str) -> Obj:
        if not res.has_scale:
            raise StatusError.not_found(res.group, f"{res.plural}/scale", name)
        obj = self._existing(res, ns, name)
        return self._scale_of(res, obj)

    def _scale_paths(self, res: Resource) -> tuple[str, str, str]:
        if res.crd is not None:
            sc = (res.crd.get("subresources") or {}).get("scale") or {}
            return (
                sc.get("specReplicasPath", ".spec.replicas").lstrip("."),
                sc.get("statusReplicasPath", ".status.replicas").lstrip("."),
                (sc.get("labelSelectorPath") or "").lstrip("."),
            )
        return ("spec.replicas", "status.replicas", "")

    def _scale_of(self, res: Resource, obj: Obj) -> Obj:
        spec_path, status_path, selector_path = self._scale_paths(res)
        meta = obj["metadata"]
        selector = ""
        if selector_path:
            selector = str(_dig(obj, selector_path) or "")
        else:
            sel = (obj.get("spec") or {}).get("selector") or {}
            if isinstance(sel, dict):
                labels = sel.get("matchLabels", sel if "matchLabels" not in sel else {})
                parts = [f"{k}={v}" for k, v in sorted(labels.items()) if isinstance(v, str)]
                for expr in sel.get("matchExpressions") or []:
                    op = expr.get("operator")
                    vals = ",".join(expr.get("values") or [])
                    key = expr.get("key")
                    if op == "In":
                        parts.append(f"{key} in ({vals})")
                    elif op == "NotIn":
                        parts.append(f"{key} notin ({vals})")
                    elif op == "Exists":
                        parts.append(str(key))
                    elif op == "DoesNotExist":
                        parts.append(f"!{key}")
                selector = ",".join(parts)
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": meta["name"],
                "namespace": meta.get("namespace", ""),
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
                "creationTimestamp": meta.get("creationTimestamp"),
            },
            "spec": {"replicas": int(_dig(obj, spec_path) or 0)},
            "status": {"replicas": int(_dig(obj, status_path) or 0), "selector": selector},
        }

    def _update_scale(
        self, res: Resource, ns: str, name: str, body: Any, query: dict[str, str], *, manager: str
    ) -> Obj:
        if not res.has_scale:
            raise StatusError.not_found(res.group, f"{res.plural}/scale", name)
        old = self._existing(res, ns, name)
        if not isinstance(body, dict):
            raise StatusError.bad_request("the body of the request must be a Scale object")
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"].get("resourceVersion"):
            raise StatusError.stale(res.group, res.plural, name)
        replicas = (body.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise StatusError.invalid(
                "autoscaling",
                "Scale",
                name,
                [
                    {
                        "reason": "FieldValueInvalid",
                        "message": f"Invalid value: {replicas!r}: must be greater than or equal "
                        "to 0",
                        "field": "spec.replicas",
                    }
                ],
            )
        spec_path = self._scale_paths(res)[0]
        new = deep_copy(old)
        _set(new, spec_path, replicas)
        saved = self.update(res, ns, name, new, query, manager=manager, old=old, subresource="")
        return self._scale_of(res, saved)

    # -- patch -----------------------------------------------------------------------------

    def patch(
        self,
        res: Resource,
        ns: str,
        name: str,
        raw: bytes,
        content_type: str,
        query: dict[str, str],
        *,
        subresource: str = "",
        manager: str = "",
    ) -> tuple[int, Obj]:
        ctype = content_type.split(";")[0].strip()
        if ctype == "application/apply-patch+yaml":
            return self._apply(res, ns, name, raw, query, subresource=subresource, manager=manager)
        try:
            patch = json.loads(raw or b"null")
        except ValueError as exc:
            raise StatusError.bad_request(f"error decoding patch: {exc}") from exc
        if subresource == "scale":
            base = self.get_scale(res, ns, name)
        else:
            base = self._existing(res, ns, name)
        doc = deep_copy(base)
        try:
            if ctype == "application/json-patch+json":
                patched = apply_json_patch(doc, patch)
            elif ctype == "application/merge-patch+json":
                patched = apply_merge_patch(doc, patch)
            elif ctype == "application/strategic-merge-patch+json":
                if res.crd is not None:
                    raise StatusError.unsupported_media(ctype)
                patched = apply_strategic_merge_patch(doc, patch, group=res.group, kind=res.kind)
            else:
                raise StatusError.unsupported_media(ctype)
        except PatchError as exc:
            raise StatusError.from_status(exc.to_status()) from exc
        if not isinstance(patched, dict):
            raise StatusError.bad_request("the patch did not produce an object")
        if subresource == "scale":
            return 200, self._update_scale(res, ns, name, patched, query, manager=manager)
        return 200, self.update(
            res, ns, name, patched, query, subresource=subresource, manager=manager, old=base
        )

    def _apply(
        self,
        res: Resource,
        ns: str,
        name: str,
        raw: bytes,
        query: dict[str, str],
        *,
        subresource: str,
        manager: str,
    ) -> tuple[int, Obj]:
        if not query.get("fieldManager"):
            raise StatusError.bad_request(
                "PATCH request must have a fieldManager: the field manager is required for apply "
                "requests"
            )
        try:
            applied = yaml.safe_load(raw or b"")
        except yaml.YAMLError as exc:
            raise StatusError.bad_request(f"error decoding YAML: {exc}") from exc
        if not isinstance(applied, dict):
            raise StatusError.bad_request("the apply body must be an object")
        applied = json.loads(json.dumps(applied, default=str))
        force = query.get("force", "") in ("true", "1")
        live = self.store.get(res.storage_key, ns if res.namespaced else "", name)
        if live is None and subresource:
            raise StatusError.not_found(res.group, res.plural, name)
        try:
            merged = apply_ssa(
                deep_copy(live) if live is not None else None,
                applied,
                manager=manager,
                force=force,
                group=res.group,
                kind=res.kind,
                now=self.now(),
            )
        except ApplyConflict as exc:
            raise StatusError.from_status(
                exc.to_status(name=name, group=res.group, kind=res.plural)
            ) from exc
        except PatchError as exc:
            raise StatusError.from_status(exc.to_status()) from exc
        if live is None:
            merged.setdefault("metadata", {})["name"] = name
            return 201, self.create(res, ns if res.namespaced else None, merged, query)
        return 200, self.update(
            res, ns, name, merged, query, subresource=subresource, old=live, operation="Apply"
        )

    # -- delete ----------------------------------------------------------------------------

    def delete(self, res: Resource, ns: str, name: str, options: Obj, query: dict[str, str]) -> Obj:
        old = self._existing(res, ns, name)
        meta = old["metadata"]
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise StatusError.conflict(
                res.group,
                res.plural,
                name,
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                f"{meta.get('uid')}",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            raise StatusError.conflict(
                res.group,
                res.plural,
                name,
                "Precondition failed: ResourceVersion in precondition: "
                f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                f"{meta.get('resourceVersion')}",
            )
        policy = options.get("propagationPolicy") or query.get("propagationPolicy", "")
        if not policy and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        new = deep_copy(old)
        nmeta = new["metadata"]
        finalizers = list(nmeta.get("finalizers") or [])
        if policy == "Orphan" and "orphan" not in finalizers:
            finalizers.append("orphan")
            finalizers = [f for f in finalizers if f != "foregroundDeletion"]
        elif policy == "Foreground" and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
            finalizers = [f for f in finalizers if f != "orphan"]
        if finalizers:
            nmeta["finalizers"] = finalizers
        key = (res.group, res.plural)
        graceful = False
        if key == ("", "pods") and not meta.get("deletionTimestamp"):
            grace = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
            if grace is None:
                grace = (old.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
            grace = int(grace)
            phase = (old.get("status") or {}).get("phase")
            if (
                grace > 0
                and (old.get("spec") or {}).get("nodeName")
                and phase
                not in (
                    "Succeeded",
                    "Failed",
                )
            ):
                graceful = True
                nmeta["deletionGracePeriodSeconds"] = grace
                nmeta["deletionTimestamp"] = format_time(
                    self.clock.now() + timedelta(seconds=grace)
                )
        elif key == ("", "pods") and meta.get("deletionTimestamp"):
            grace = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
            if grace is not None and int(grace) == 0:
                nmeta.pop("deletionGracePeriodSeconds", None)
        keep = bool(nmeta.get("finalizers")) or graceful
        if key == ("", "namespaces"):
            if (new.get("spec") or {}).get("finalizers"):
                keep = True
            new.setdefault("status", {})["phase"] = "Terminating"
        if (
            key == ("", "pods")
            and meta.get("deletionTimestamp")
            and nmeta.get("deletionGracePeriodSeconds")
        ):
            keep = True
        if query.get("dryRun"):
            return self.present(res, new)
        if keep:
            if not nmeta.get("deletionTimestamp"):
                nmeta["deletionTimestamp"] = self.now()
                nmeta.setdefault("deletionGracePeriodSeconds", 0)
            if new == old:
                return self.present(res, old)
            self._generation(res, new, old)
            updated = self.store.update(res.storage_key, new, old)
            return self.present(res, updated)
        final = self.store.delete(res.storage_key, new, old)
        self._after_delete(res, final)
        if key in _RETURN_DELETED or res.crd is not None:
            return self.present(res, final)
        details: dict[str, Any] = {"name": name}
        if res.group:
            details["group"] = res.group
        details["kind"] = res.plural
        details["uid"] = meta.get("uid")
        return status_success(details)

    def delete_collection(
        self, res: Resource, ns: str | None, options: Obj, query: dict[str, str]
    ) -> Obj:
        listed = self.list(
            res,
            ns,
            {k: v for k, v in query.items() if k in ("labelSelector", "fieldSelector")},
        )
        deleted = []
        for item in listed["items"]:
            meta = item["metadata"]
            try:
                self.delete(res, meta.get("namespace", ""), meta["name"], options, query)
            except StatusError as exc:
                if exc.code != 404:
                    raise
                continue
            deleted.append(item)
        return {
            "kind": res.list_kind,
            "apiVersion": res.api_version,
            "metadata": {"resourceVersion": str(self.store.rv)},
            "items": deleted,
        }

    # -- pod subresources ------------------------------------------------------------------

    def bind(self, res: Resource, ns: str, name: str, body: Any) -> Obj:
        old = self._existing(res, ns, name)
        target = (body or {}).get("target") or {}
        node = target.get("name")
        if not node:
            raise StatusError.bad_request("a Binding must name a target node")
        if (old.get("spec") or {}).get("nodeName"):
            raise StatusError.conflict(
                "",
                "pods/binding",
                name,
                f'pod {name} is already assigned to node "{old["spec"]["nodeName"]}"',
            )
        new = deep_copy(old)
        new.setdefault("spec", {})["nodeName"] = node
        conditions = [
            c
            for c in (new.setdefault("status", {}).get("conditions") or [])
            if c.get("type") != "PodScheduled"
        ]
        conditions.append(
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": self.now()}
        )
        new["status"]["conditions"] = conditions
        self._generation(res, new, old)
        self.store.update(res.storage_key, new, old)
        return status_success()


def _default_pod_spec(spec: Obj) -> None:
    """kube-apiserver's pod spec defaults (the ones kubectl describe and controllers read)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            if not isinstance(c, dict):
                continue
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            image = str(c.get("image", ""))
            tag = image.rsplit("/", 1)[-1]
            latest = ":" not in tag or tag.endswith(":latest")
            c.setdefault(
                "imagePullPolicy", "Always" if latest and "@" not in image else "IfNotPresent"
            )
            c.setdefault("resources", {})
            for port in c.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def _dig(obj: Any, path: str) -> Any:
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _set(obj: Obj, path: str, value: Any) -> None:
    parts = path.split(".")
    cur = obj
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value


def _int_param(query: dict[str, str], name: str) -> int:
    raw = query.get(name, "")
    if not raw:
        return 0
    try:
        return max(0, int(raw))
    except ValueError as exc:
        raise StatusError.bad_request(f"invalid {name}: {raw!r}") from exc


def _encode_continue(rv: int, key: tuple[str, str]) -> str:
    token = msgspec.json.encode({"v": "meta.k8s.io/v1", "rv": rv, "start": list(key)})
    return base64.urlsafe_b64encode(token).decode()


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        return int(data["rv"]), (str(data["start"][0]), str(data["start"][1]))
    except (ValueError, KeyError, IndexError, TypeError, binascii.Error) as exc:
        raise StatusError.bad_request(f"continue key is not valid: {exc}") from exc


def _too_large(requested: int, current: int) -> StatusError:
    return StatusError(
        504,
        "Timeout",
        f"Too large resource version: {requested}, current: {current}",
        details={
            "causes": [
                {
                    "reason": "ResourceVersionTooLarge",
                    "message": f"Too large resource version: {requested}, current: {current}",
                }
            ],
            "retryAfterSeconds": 1,
        },
    )
