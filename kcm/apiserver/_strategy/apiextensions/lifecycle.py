"""What apiextensions-apiserver's CRD controllers do, run inline after each CRD write.

In kube-apiserver these are asynchronous controllers writing the CRD's status: a new CRD is
created with empty ``acceptedNames`` and no conditions, and a moment later has them. Here they
run right after the write that triggers them, as separate writes, so the create response still
shows the CRD as stored before them (as kube-apiserver's does):

- **naming** (``NamingConditionController``): a name (plural, singular, short names, kind,
  list kind) is accepted unless another CRD of the group has already accepted it;
  ``NamesAccepted`` is True (``NoConflicts``) or False with the last conflict
  (``KindConflict``: ``"Widget" is already in use``). A CRD that frees names makes the others
  of its group try again.
- **establishing**: once its names are accepted, ``Established`` is True
  (``InitialNamesAccepted``); until then False (``NotAccepted``). Only a CRD whose names are
  accepted or that is established is served.
- **finalizer** (``CRDFinalizer``): a deleted CRD (its ``customresourcecleanup`` finalizer)
  goes ``Terminating`` (``InstanceDeletionInProgress``), takes no new objects, deletes its
  objects (which honour their own finalizers) and, once none is left, drops the finalizer and
  goes away.

Status writes are recorded in managedFields as the controllers' client writes them
(``Go-http-client``, ``Update`` of the ``status`` subresource).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._apply import track_update
from ..._status import StatusError
from ..._store import Obj, deep_copy
from .._context import Context

__all__ = [
    "CLEANUP_FINALIZER",
    "CRD_KEY",
    "instance_removed",
    "mark_terminating",
    "reconcile",
    "reconcile_group",
]

CRD_KEY: Final = ("apiextensions.k8s.io", "customresourcedefinitions")
CLEANUP_FINALIZER: Final = "customresourcecleanup.apiextensions.k8s.io"
_MANAGER: Final = "Go-http-client"


def condition(crd: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    """The CRD's status condition of type ``kind``."""
    for cond in (crd.get("status") or {}).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def is_true(crd: Mapping[str, Any], kind: str) -> bool:
    cond = condition(crd, kind)
    return cond is not None and cond.get("status") == "True"


def _set_condition(status: dict[str, Any], new: dict[str, Any], now: str) -> None:
    """``SetCRDCondition``: append, or update in place (a new transition time only when the
    status changes)."""
    conditions = status.get("conditions") or []
    status["conditions"] = conditions
    for cond in conditions:
        if cond.get("type") == new["type"]:
            if cond.get("status") != new["status"] or not cond.get("lastTransitionTime"):
                cond["lastTransitionTime"] = now
            cond.update(status=new["status"], reason=new["reason"], message=new["message"])
            return
    conditions.append({**new, "lastTransitionTime": now})


def _cond(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message}


def mark_terminating(crd: Obj, now: str) -> None:
    """What DELETE does to a CRD first: the cleanup finalizer and a Terminating condition."""
    meta = crd["metadata"]
    finalizers = list(meta.get("finalizers") or [])
    if CLEANUP_FINALIZER not in finalizers:
        finalizers.append(CLEANUP_FINALIZER)
    meta["finalizers"] = finalizers
    status = crd.setdefault("status", {})
    _set_condition(
        status,
        _cond(
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        ),
        now,
    )


# -- running the controllers -----------------------------------------------------------------


def _write(ctx: Context, new: Obj, old: Obj) -> Obj | None:
    """Store ``new`` over ``old`` as kube-apiserver's own status write (a deleting CRD whose
    last finalizer goes is removed); the stored object, or None when it is gone."""
    tracked = track_update(
        old,
        new,
        manager=_MANAGER,
        now=ctx.now(),
        kind="CustomResourceDefinition",
        subresource="status",
        ignored=(("f:metadata",), ("f:spec",)),
    )
    meta = tracked["metadata"]
    if meta.get("deletionTimestamp") and not meta.get("finalizers"):
        final = ctx.store.delete(CRD_KEY, tracked, old)
        removed(ctx, final)
        return None
    stored = ctx.store.update(CRD_KEY, tracked, old)
    ctx.registry.set_crd(stored)
    return stored


def removed(ctx: Context, crd: Obj) -> None:
    """After a CRD is gone: its objects (any a finalizer did not handle) and its API go, and
    the other CRDs of its group may take the names it freed."""
    spec = crd.get("spec") or {}
    group = spec.get("group", "")
    plural = (spec.get("names") or {}).get("plural", "")
    bucket = ctx.store.objects.get((group, plural), {})
    cr_res = ctx.registry.by_storage(group, plural)
    if cr_res is not None:
        for obj in list(bucket.values()):
            ctx.store.delete(cr_res.storage_key, deep_copy(obj), obj)
    ctx.registry.drop_crd(crd["metadata"]["name"])
    reconcile_group(ctx, group)


def reconcile_group(ctx: Context, group: str) -> None:
    """Run the controllers for every CRD of ``group`` (names another CRD freed)."""
    for crd in list(ctx.store.objects.get(CRD_KEY, {}).values()):
        if (crd.get("spec") or {}).get("group") == group:
            reconcile(ctx, crd["metadata"]["name"], requeue=False)


def reconcile(ctx: Context, name: str, *, requeue: bool = True) -> None:
    """Run the naming, establishing and finalizer controllers for CRD ``name``."""
    crd = ctx.store.get(CRD_KEY, "", name)
    if crd is None:
        return
    ctx.registry.set_crd(crd)
    names_changed = False
    new = _named(ctx, crd)
    if new is not None:
        names_changed = (new.get("status") or {}).get("acceptedNames") != (
            crd.get("status") or {}
        ).get("acceptedNames")
        crd = _write(ctx, new, crd) or {}
        if not crd:
            return
    new = _established(ctx, crd)
    if new is not None:
        crd = _write(ctx, new, crd) or {}
        if not crd:
            return
    if names_changed and requeue:
        reconcile_group(ctx, (crd.get("spec") or {}).get("group", ""))
    _finalize(ctx, name)


def _named(ctx: Context, crd: Obj) -> Obj | None:
    """The CRD with the naming controller's status, or None when nothing changes."""
    spec_names = (crd.get("spec") or {}).get("names") or {}
    status = crd.get("status") or {}
    accepted = status.get("acceptedNames") or {}
    if _names_equal(spec_names, accepted):
        return None
    group = (crd.get("spec") or {}).get("group")
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in ctx.store.objects.get(CRD_KEY, {}).values():
        if (other.get("spec") or {}).get("group") != group:
            continue
        theirs = (other.get("status") or {}).get("acceptedNames") or {}
        resources.update(
            [
                theirs.get("plural", ""),
                theirs.get("singular", ""),
                *(theirs.get("shortNames") or []),
            ]
        )
        kinds.update([theirs.get("kind", ""), theirs.get("listKind", "")])
    names = dict(accepted)
    names.setdefault("plural", "")
    names.setdefault("kind", "")
    verdict = _cond("NamesAccepted", "True", "NoConflicts", "no conflicts found")
    for key, used, reason in (
        ("plural", resources, "PluralConflict"),
        ("singular", resources, "SingularConflict"),
    ):
        error = _taken(spec_names.get(key, ""), accepted.get(key, ""), used)
        if error:
            verdict = _cond("NamesAccepted", "False", reason, error)
        elif spec_names.get(key):
            names[key] = spec_names[key]
    wanted_short = list(spec_names.get("shortNames") or [])
    if wanted_short != list(accepted.get("shortNames") or []):
        mine = set(accepted.get("shortNames") or [])
        errors = [e for s in wanted_short if s not in mine and (e := _taken(s, "", resources))]
        if errors:
            message = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            verdict = _cond("NamesAccepted", "False", "ShortNamesConflict", message)
        elif wanted_short:
            names["shortNames"] = wanted_short
        else:
            names.pop("shortNames", None)
    for key, reason in (("kind", "KindConflict"), ("listKind", "ListKindConflict")):
        error = _taken(spec_names.get(key, ""), accepted.get(key, ""), kinds)
        if error:
            verdict = _cond("NamesAccepted", "False", reason, error)
        elif spec_names.get(key):
            names[key] = spec_names[key]
    if spec_names.get("categories"):
        names["categories"] = list(spec_names["categories"])
    else:
        names.pop("categories", None)
    established = condition(crd, "Established")
    established_cond = (
        _cond(
            "Established",
            established["status"],
            established.get("reason", ""),
            established.get("message", ""),
        )
        if established
        else _cond("Established", "False", "NotAccepted", "not all names are accepted")
    )
    if established_cond["status"] != "True" and verdict["status"] == "True":
        established_cond = _cond(
            "Established", "False", "Installing", "the initial names have been accepted"
        )
    current = condition(crd, "NamesAccepted")
    if names == accepted and current is not None and _same_condition(current, verdict):
        return None
    new = deep_copy(crd)
    new_status = new.setdefault("status", {})
    new_status["acceptedNames"] = names
    now = ctx.now()
    _set_condition(new_status, verdict, now)
    _set_condition(new_status, established_cond, now)
    return new


def _names_equal(spec_names: Mapping[str, Any], accepted: Mapping[str, Any]) -> bool:
    keys = set(spec_names) | set(accepted)
    return all((spec_names.get(k) or None) == (accepted.get(k) or None) for k in keys)


def _same_condition(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("type", "status", "reason", "message"))


def _taken(requested: str, accepted: str, used: set[str]) -> str:
    """``equalToAcceptedOrFresh``: "" when ``requested`` may be accepted, else the error."""
    if requested == accepted or requested not in used:
        return ""
    return f'"{requested}" is already in use'


def _established(ctx: Context, crd: Obj) -> Obj | None:
    """The establishing controller: Established once the names are accepted."""
    if not is_true(crd, "NamesAccepted") or is_true(crd, "Established"):
        return None
    new = deep_copy(crd)
    _set_condition(
        new.setdefault("status", {}),
        _cond(
            "Established", "True", "InitialNamesAccepted", "the initial names have been accepted"
        ),
        ctx.now(),
    )
    return new


# -- deletion --------------------------------------------------------------------------------


def _finalize(ctx: Context, name: str) -> None:
    """The CRD finalizer: delete the objects, then let the CRD go."""
    crd = ctx.store.get(CRD_KEY, "", name)
    if crd is None or name in ctx.finalizing:
        return
    meta = crd["metadata"]
    if not meta.get("deletionTimestamp") or CLEANUP_FINALIZER not in (meta.get("finalizers") or ()):
        return
    in_progress = _cond(
        "Terminating",
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    )
    current = condition(crd, "Terminating")
    if current is None or not _same_condition(current, in_progress):
        new = deep_copy(crd)
        _set_condition(new.setdefault("status", {}), in_progress, ctx.now())
        stored = _write(ctx, new, crd)
        if stored is None:
            return
        crd = stored
    if is_true(crd, "Established"):
        if _delete_instances(ctx, crd):
            return  # objects with finalizers remain; the last one's removal finishes this
        done = _cond("Terminating", "False", "InstanceDeletionCompleted", "removed all instances")
    else:
        done = _cond("Terminating", "False", "NeverEstablished", "resource was never established")
    new = deep_copy(crd)
    _set_condition(new.setdefault("status", {}), done, ctx.now())
    new["metadata"]["finalizers"] = [
        f for f in meta.get("finalizers") or () if f != CLEANUP_FINALIZER
    ]
    if not new["metadata"]["finalizers"]:
        del new["metadata"]["finalizers"]
    _write(ctx, new, crd)


def _delete_instances(ctx: Context, crd: Obj) -> bool:
    """Delete every object of the CRD (as DELETE does); whether some remain."""
    spec = crd.get("spec") or {}
    group = spec.get("group", "")
    plural = (spec.get("names") or {}).get("plural", "")
    res = ctx.registry.by_storage(group, plural)
    bucket = ctx.store.objects.get((group, plural), {})
    if res is None or not bucket:
        return bool(bucket)
    name = crd["metadata"]["name"]
    ctx.finalizing.add(name)
    try:
        for obj in list(bucket.values()):
            meta = obj["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            try:
                assert ctx.verbs is not None
                ctx.verbs.delete(res, meta.get("namespace", ""), meta["name"], {}, {})
            except StatusError as exc:
                if exc.code != 404:
                    raise
    finally:
        ctx.finalizing.discard(name)
    return bool(ctx.store.objects.get((group, plural)))


def instance_removed(ctx: Context, group: str, plural: str) -> None:
    """An object of a CRD is gone: a terminating CRD with no objects left can go too."""
    crd_name = f"{plural}.{group}"
    crd = ctx.store.get(CRD_KEY, "", crd_name)
    if crd is None or not crd["metadata"].get("deletionTimestamp"):
        return
    if not ctx.store.objects.get((group, plural)):
        _finalize(ctx, crd_name)
