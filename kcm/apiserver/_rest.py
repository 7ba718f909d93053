"""What each REST verb does to stored objects: kube-apiserver's generic registry, in miniature.

Plain synchronous methods over the :class:`Store`; the ASGI layer parses requests and calls these.
Nothing here depends on the kind: whatever does is a hook of the kind's strategy
(:mod:`._strategy`), called at fixed points of each verb. Every failure is a
:class:`StatusError` carrying the Status kube-apiserver would send.
"""

from __future__ import annotations

import builtins
import json
import uuid
from typing import Any

from kcm.clock import Clock

from ._admission import AdmissionChain, Attributes
from ._apply import ApplyConflict, apply_ssa, track_update
from ._apply_request import check_applied, check_apply_options, check_name, decode_apply_body
from ._body import decode_patched
from ._field_errors import Cause, invalid
from ._list import ListPage, list_source, page
from ._names import generate_name
from ._options import ListOptions, go_bool
from ._patch import PatchError, apply_json_patch, apply_merge_patch
from ._registry import Registry, Resource
from ._requester import Requester
from ._select import build_matcher
from ._status import StatusError, status_success
from ._store import Obj, Store, deep_copy
from ._strategic import apply_strategic_merge_patch
from ._strategy import Context, Strategy, StreamReply, Subresource, UpdateRules, strategy_for
from ._tokens import TokenIssuer

__all__ = ["Rest"]

_GENERATE_NAME_DRAWS = 8
"""How many names a ``generateName`` create tries before AlreadyExists (kube's 1 + 7 retries)."""

_CLIENT_UNSET_ON_CREATE = ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink")

_OMITTED_WHEN_EMPTY = ("labels", "annotations", "finalizers", "ownerReferences")
"""ObjectMeta maps and lists Go does not write when empty (``omitempty``)."""


class _GoHex(int):
    """A uint64 as Go's ``%#v`` prints it in a field error (``0x0``)."""

    def __str__(self) -> str:
        return hex(self)


_UNSET_RV = _GoHex(0)


class Rest:
    """The verbs. ``clock`` stamps creationTimestamp, deletionTimestamp and managedFields."""

    def __init__(
        self,
        store: Store,
        registry: Registry,
        clock: Clock,
        tokens: TokenIssuer | None = None,
        admission: AdmissionChain | None = None,
    ) -> None:
        self.store = store
        self.registry = registry
        self.clock = clock
        self.admission = admission if admission is not None else AdmissionChain()
        self.ctx = Context(clock, store, registry, tokens or TokenIssuer(clock))
        self.ctx.verbs = self

    def now(self) -> str:
        return self.ctx.now()

    # -- helpers ---------------------------------------------------------------------------

    def existing(self, res: Resource, ns: str, name: str) -> Obj:
        """The stored object; 404 NotFound when there is none."""
        obj = self.store.get(res.storage_key, ns, name)
        if obj is None:
            raise StatusError.not_found(res.group, res.plural, name)
        return obj

    def _existing_under(
        self, res: Resource, sub: Subresource, ns: str, name: str, *, write: bool
    ) -> Obj:
        """The stored object a subresource request reads or writes; the subresource's 404."""
        obj = self.store.get(res.storage_key, ns, name)
        if obj is None:
            raise sub.missing(name, write=write)
        return obj

    def present(self, res: Resource, obj: Obj) -> Obj:
        """The object as served under ``res``'s version (custom resources keep one storage)."""
        return strategy_for(res).present(obj)

    def commit(self, res: Resource, new: Obj, old: Obj) -> Obj:
        """Store ``new`` over ``old`` with the next generation; no other checks or hooks."""
        _set_generation(new, strategy_for(res).next_generation(new, old))
        return self.store.update(res.storage_key, new, old)

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

    def _track(
        self,
        strategy: Strategy,
        old: Obj | None,
        new: Obj,
        manager: str,
        operation: str,
        subresource: str = "",
    ) -> Obj:
        if not manager or operation == "Apply":
            return new
        return track_update(
            old,
            new,
            manager=manager,
            operation=operation,
            now=self.now(),
            kind=new.get("kind"),
            subresource=subresource,
            field_type=strategy.field_type(),
            ignored=strategy.reset_fields(subresource),
        )

    @staticmethod
    def _raise_invalid(res: Resource, obj: Obj, causes: builtins.list[Cause]) -> None:
        if causes:
            name = obj["metadata"].get("name", "")
            raise StatusError.invalid(res.group, res.kind, name, [dict(c) for c in causes])

    # -- get / list ------------------------------------------------------------------------

    def get(self, res: Resource, ns: str, name: str, subresource: str = "") -> Obj:
        """The object, or what its ``subresource`` shows of it (``/scale``: a Scale)."""
        strategy = strategy_for(res)
        if subresource:
            sub = strategy.subresource(subresource)
            return sub.read(self._existing_under(res, sub, ns, name, write=False))
        return strategy.present(self.existing(res, ns, name))

    def list(self, res: Resource, ns: str | None, options: ListOptions | None = None) -> Obj:
        options = options or ListOptions()
        matcher = build_matcher(res, options.label_selector, options.field_selector)
        source = list_source(self.store, res, ns, options)
        present = strategy_for(res).present
        found: ListPage = page(source, ns, matcher, present, across_namespaces=ns is None)
        meta: dict[str, Any] = {"resourceVersion": str(source.rv)}
        if found.continue_token:
            meta["continue"] = found.continue_token
            if matcher is None:
                meta["remainingItemCount"] = found.remaining
        return {
            "kind": res.list_kind,
            "apiVersion": res.api_version,
            "metadata": meta,
            "items": found.items,
        }

    # -- create ----------------------------------------------------------------------------

    def create(
        self,
        res: Resource,
        ns: str | None,
        body: Any,
        query: dict[str, str],
        *,
        manager: str = "",
        who: Requester | None = None,
    ) -> Obj:
        """Create an object; ``who`` is whom an access review answers for (the
        administrator when not given)."""
        strategy = strategy_for(res)
        strategy.admit_create()
        obj = self._check_type(res, body)
        strategy.decode(obj)
        decoded = _as_decoded(strategy, obj)
        meta = obj["metadata"]
        attributes = Attributes(
            "CREATE", res, ns or "", obj, self.store, self.clock, dry_run=bool(query.get("dryRun"))
        )
        self.admission.admit(attributes)
        _place(res, ns, meta)
        if strategy.answers_create:
            answered = strategy.answer(obj, who or Requester.admin(), self.ctx)
            return self._track(strategy, None, answered, manager, "Update")
        if not meta.get("name"):
            meta["name"] = self._name_from_generate_name(res, meta)
        name = meta["name"]
        _stamp_new(meta, self.now(), generation=strategy.manages_generation)
        _omit_empty(meta)
        strategy.prepare_for_create(obj, self.ctx)
        strategy.stamp_creator(obj, who or Requester.admin())
        self._raise_invalid(res, obj, strategy.validate(obj))
        if _numeric_resource_version(meta.get("resourceVersion")):
            raise StatusError(500, "", "resourceVersion should not be set on objects to be created")
        meta.pop("resourceVersion", None)
        self.admission.validate(attributes)
        if self.store.get(res.storage_key, meta.get("namespace", ""), name) is not None:
            raise StatusError.already_exists(res.group, res.plural, name)
        _copy_managed_fields(self._track(strategy, None, decoded, manager, "Update"), obj)
        strategy.canonicalize(obj)
        if query.get("dryRun"):
            return obj
        created = self.store.create(res.storage_key, obj)
        strategy.after_write(created, self.ctx)
        return strategy.present(created)

    def _name_from_generate_name(self, res: Resource, meta: Obj) -> str:
        """A name from ``generateName``, drawn again while it is taken (kube-apiserver's
        RetryGenerateName: up to 8 draws; a name still taken then answers AlreadyExists).
        Five random characters (27^5 names) collide in about one of a hundred 500-pod
        ReplicaSets. Without ``generateName``: 422, a name is required."""
        if not meta.get("generateName"):
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
        name = generate_name(meta["generateName"])
        for _ in range(_GENERATE_NAME_DRAWS - 1):
            if self.store.get(res.storage_key, meta.get("namespace", ""), name) is None:
                break
            name = generate_name(meta["generateName"])
        return name

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
        uid_precondition: bool = True,
    ) -> Obj:
        """PUT (and, with ``old`` given, what a patch made). ``uid_precondition``: a uid in
        the body must be the object's (409), as a PUT's is; a patch's is validated instead."""
        strategy = strategy_for(res)
        rules: UpdateRules = strategy
        if subresource:
            sub = strategy.subresource(subresource)
            if sub.view:
                return self._update_view(res, sub, ns, name, body, query, manager=manager)
            rules = sub
        old = old if old is not None else self.existing(res, ns, name)
        new = self._check_type(res, body)
        strategy.decode(new)
        _check_update_target(res, ns, name, new, old, uid_precondition=uid_precondition)
        if not new["metadata"].get("resourceVersion") and not strategy.allow_unconditional_update:
            raise StatusError.invalid(
                res.group,
                res.plural,
                name,
                [invalid("metadata.resourceVersion", _UNSET_RV, "must be specified for an update")],
            )
        rules.default_on_update(new)  # the defaults come with decoding, before all else
        strategy.canonicalize(new)  # compared with the stored object as Go compares structs
        attributes = Attributes(
            "UPDATE",
            res,
            ns,
            new,
            self.store,
            self.clock,
            old=old,
            subresource=subresource,
            dry_run=bool(query.get("dryRun")),
        )
        self.admission.admit(attributes)
        new = rules.prepare_for_update(new, old)
        rules.stamp_update(new, old, self.ctx.now())
        _carry_over_metadata(res, ns, new, old)
        _omit_empty(new["metadata"])
        if subresource:  # a subresource's strategy leaves the generation alone
            _set_generation(new, int(old["metadata"].get("generation") or 0))
        else:
            _set_generation(new, strategy.next_generation(new, old))
        if "managedFields" not in new["metadata"] and "managedFields" in old["metadata"]:
            new["metadata"]["managedFields"] = old["metadata"]["managedFields"]
        causes = strategy.validate_common_update(new, old) + rules.validate_update(new, old)
        self._raise_invalid(res, new, causes)
        new = self._track(strategy, old, new, manager, operation, subresource)
        strategy.canonicalize(new)
        if new == old:
            return strategy.present(old)  # no-op: kube-apiserver skips the write
        attributes.obj = new
        self.admission.validate(attributes)
        if query.get("dryRun"):
            return new
        return self._store_update(res, strategy, new, old)

    def _store_update(self, res: Resource, strategy: Strategy, new: Obj, old: Obj) -> Obj:
        """Write an update; one that removes a deleting object's last hold removes it.

        As kube-apiserver (its store deletes the stored object instead of writing the update):
        the DELETED event carries the object as it was stored, at the deletion's
        resourceVersion, and the answer is the update, at the stored resourceVersion.
        """
        if _deletion_complete(strategy, new):
            final = self.store.delete(res.storage_key, deep_copy(old), old)
            strategy.after_delete(final, self.ctx)
            return strategy.present(new)
        updated = self.store.update(res.storage_key, new, old)
        strategy.after_write(updated, self.ctx)
        return strategy.present(updated)

    def _update_view(
        self,
        res: Resource,
        sub: Subresource,
        ns: str,
        name: str,
        body: Any,
        query: dict[str, str],
        *,
        manager: str,
    ) -> Obj:
        """PUT of a view (a Scale): the whole object changes as the main resource would."""
        old = self._existing_under(res, sub, ns, name, write=True)
        new = sub.write(old, body, name)
        saved = self.update(res, ns, name, new, query, manager=manager, old=old, subresource="")
        return sub.read(saved)

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
        strategy = strategy_for(res)
        view = strategy.subresource(subresource) if subresource else None
        if view is not None and view.view:
            base = view.read(self._existing_under(res, view, ns, name, write=True))
        else:
            base = self.existing(res, ns, name)
        patched = _patched(strategy, ctype, deep_copy(base), patch)
        if view is not None and view.view:
            return 200, self._update_view(res, view, ns, name, patched, query, manager=manager)
        patched = decode_patched(res, patched)
        return 200, self.update(
            res,
            ns,
            name,
            patched,
            query,
            subresource=subresource,
            manager=manager,
            old=base,
            uid_precondition=False,
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
        check_apply_options(query)
        applied = decode_apply_body(raw)
        force = go_bool([query["force"]] if "force" in query else None)
        live = self.store.get(res.storage_key, ns if res.namespaced else "", name)
        if live is None and subresource:
            raise StatusError.not_found(res.group, res.plural, name)
        check_applied(res, ns, name, applied)
        try:
            strategy = strategy_for(res)
            merged = apply_ssa(
                deep_copy(live) if live is not None else None,
                applied,
                manager=manager,
                force=force,
                group=res.group,
                kind=res.kind,
                now=self.now(),
                subresource=subresource,
                field_type=strategy.field_type(),
                ignored=strategy.reset_fields(subresource),
            )
        except ApplyConflict as exc:
            raise StatusError.from_status(exc.to_status()) from exc
        except PatchError as exc:
            raise StatusError.from_status(exc.to_status()) from exc
        check_name(name, merged)
        if live is None:
            merged.setdefault("metadata", {})["name"] = name
            return 201, self.create(res, ns if res.namespaced else None, merged, query)
        return 200, self.update(
            res,
            ns,
            name,
            merged,
            query,
            subresource=subresource,
            old=live,
            operation="Apply",
            uid_precondition=False,
        )

    # -- delete ----------------------------------------------------------------------------

    def delete(self, res: Resource, ns: str, name: str, options: Obj, query: dict[str, str]) -> Obj:
        """DELETE with ``options`` (a DeleteOptions dict, already validated: the body's or the
        query's). ``dryRun`` answers what a deletion would, and changes nothing."""
        strategy = strategy_for(res)
        old = self.existing(res, ns, name)
        _check_preconditions(res, name, old, options)
        new = deep_copy(old)
        _add_propagation_finalizer(new, options)
        strategy.prepare_for_delete(old, new, options, query, self.ctx)
        keep = bool(new["metadata"].get("finalizers")) or strategy.deletion_held(new)
        dry_run = bool(options.get("dryRun"))
        if keep:
            return self._start_deletion(res, strategy, new, old, dry_run=dry_run)
        final = new
        if not dry_run:
            if new["metadata"].get("deletionTimestamp") and not old["metadata"].get(
                "deletionTimestamp"
            ):  # a graceful deletion with no grace left: the update, then the delete
                old = new = self.commit(res, new, old)
                new = deep_copy(new)
            final = self.store.delete(res.storage_key, new, old)
            strategy.after_delete(final, self.ctx)
        if strategy.return_deleted_object:
            return strategy.present(final)
        details: dict[str, Any] = {"name": name}
        if res.group:
            details["group"] = res.group
        details["kind"] = res.plural
        details["uid"] = old["metadata"].get("uid")
        return status_success(details)

    def _start_deletion(
        self, res: Resource, strategy: Strategy, new: Obj, old: Obj, *, dry_run: bool = False
    ) -> Obj:
        """A delete that keeps the object (finalizers, a grace period): mark it deleting."""
        meta = new["metadata"]
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = self.now()
            meta.setdefault("deletionGracePeriodSeconds", 0)
        if new == old:
            return strategy.present(old)
        if dry_run:
            return strategy.present(new)
        updated = self.commit(res, new, old)
        strategy.after_write(updated, self.ctx)
        return strategy.present(updated)

    def delete_collection(
        self,
        res: Resource,
        ns: str | None,
        options: Obj,
        query: dict[str, str],
        list_options: ListOptions | None = None,
    ) -> Obj:
        listed = self.list(res, ns, list_options)
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

    # -- subresources that act or stream ---------------------------------------------------

    def post(
        self,
        res: Resource,
        ns: str,
        name: str,
        subresource: str,
        body: Any,
        *,
        manager: str = "",
        query: dict[str, str] | None = None,
    ) -> Obj:
        """POST on an object's subresource (``pods/binding``, ``pods/eviction``,
        ``serviceaccounts/token``); 405 elsewhere. The posted object records its manager in
        managedFields, as every create does."""
        if manager and isinstance(body, dict):
            body = track_update(
                None,
                body,
                manager=manager,
                now=self.now(),
                kind=body.get("kind"),
                subresource=subresource,
            )
        return (
            strategy_for(res).subresource(subresource).post(self, ns, name, body, query=query or {})
        )

    def connect(
        self,
        res: Resource,
        ns: str,
        name: str,
        subresource: str,
        query: dict[str, str],
        *,
        upgrade: bool,
    ) -> StreamReply:
        """GET or POST on a streaming subresource (``pods/log``, ``pods/exec``, ...)."""
        sub = strategy_for(res).subresource(subresource)
        return sub.connect(self, ns, name, query, upgrade=upgrade)


def _place(res: Resource, ns: str | None, meta: Obj) -> None:
    """Put a new object in the request's namespace (or in none, for cluster-scoped kinds)."""
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


def _stamp_new(meta: Obj, now: str, *, generation: bool) -> None:
    """What the server sets on every new object, whatever the client sent (``generation: 1``
    for kinds that manage it; other kinds keep the client's)."""
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = now
    if generation:
        meta["generation"] = 1
    for field in _CLIENT_UNSET_ON_CREATE:
        meta.pop(field, None)


def _as_decoded(strategy: Strategy, obj: Obj) -> Obj:
    """A new object as kube-apiserver's decoder hands it to the field manager: with the
    kind's scheme defaults, before admission and ``PrepareForCreate`` (so what those add, a
    generated selector, a service account volume, a cluster IP, is nobody's field)."""
    decoded = deep_copy(obj)
    strategy.default(decoded)
    return decoded


def _copy_managed_fields(tracked: Obj, obj: Obj) -> None:
    """``obj`` gets the managedFields computed on ``tracked`` (or none)."""
    fields = tracked["metadata"].get("managedFields")
    if fields:
        obj["metadata"]["managedFields"] = fields
    else:
        obj["metadata"].pop("managedFields", None)


def _set_generation(obj: Obj, generation: int) -> None:
    """``metadata.generation``, omitted when 0 (as Go's ``omitempty`` writes it)."""
    if generation:
        obj["metadata"]["generation"] = generation
    else:
        obj["metadata"].pop("generation", None)


def _numeric_resource_version(rv: Any) -> bool:
    """A resourceVersion storage would read as a version (kube-apiserver refuses one on a
    create with a bare 500)."""
    return isinstance(rv, str) and rv.isdigit() and int(rv) != 0


def _omit_empty(meta: Obj) -> None:
    """Drop empty labels, annotations, finalizers and owner references, as the Go struct kube
    stores does (removing the last annotation leaves no ``annotations``)."""
    for key in _OMITTED_WHEN_EMPTY:
        if key in meta and not meta[key]:
            del meta[key]


def _check_update_target(
    res: Resource, ns: str, name: str, new: Obj, old: Obj, *, uid_precondition: bool
) -> None:
    """The body names the object on the URL (400, ``checkName``), has its uid when a PUT
    says one (409, the uid precondition) and its resourceVersion when it says one (409)."""
    meta = new["metadata"]
    if (meta.get("name") or "") != name:
        raise StatusError.bad_request(
            f"the name of the object ({meta.get('name') or ''}) does not match the name on the "
            f"URL ({name})"
        )
    if res.namespaced and meta.get("namespace") and meta["namespace"] != ns:
        raise StatusError.bad_request(
            f"the namespace of the object ({meta['namespace']}) does not match the namespace on "
            f"the request ({ns})"
        )
    old_meta = old["metadata"]
    if uid_precondition and meta.get("uid") and meta["uid"] != old_meta.get("uid"):
        raise StatusError.conflict(
            res.group,
            res.plural,
            name,
            f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: "
            f"{old_meta.get('uid')}",
        )
    rv = meta.get("resourceVersion")
    if rv and rv != old_meta.get("resourceVersion"):
        raise StatusError.stale(res.group, res.plural, name)


def _carry_over_metadata(res: Resource, ns: str, new: Obj, old: Obj) -> None:
    """What kube-apiserver's ``BeforeUpdate`` keeps of the stored object: the namespace, a
    uid the body leaves out, the creation time, a deletion already under way; selfLink is
    never stored. (Changing uid or starting a deletion by update are validation errors.)"""
    meta = new["metadata"]
    old_meta = old["metadata"]
    if res.namespaced:
        meta["namespace"] = ns
    else:
        meta.pop("namespace", None)
    if not meta.get("uid") and old_meta.get("uid"):
        meta["uid"] = old_meta["uid"]
    if old_meta.get("creationTimestamp"):
        meta["creationTimestamp"] = old_meta["creationTimestamp"]
    if old_meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = old_meta["deletionTimestamp"]
    if (
        old_meta.get("deletionGracePeriodSeconds") is not None
        and meta.get("deletionGracePeriodSeconds") is None
    ):
        meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
    meta.pop("selfLink", None)
    meta["resourceVersion"] = old_meta.get("resourceVersion")


def _deletion_complete(strategy: Strategy, obj: Obj) -> bool:
    """A deleting object with no finalizers left and nothing else holding it."""
    meta = obj["metadata"]
    if not meta.get("deletionTimestamp") or meta.get("finalizers"):
        return False
    return not strategy.deletion_held(obj)


def _patched(strategy: Strategy, ctype: str, doc: Obj, patch: Any) -> Obj:
    """``doc`` with a JSON, merge or strategic merge ``patch`` applied (415 for others)."""
    try:
        if ctype == "application/json-patch+json":
            patched = apply_json_patch(doc, patch)
        elif ctype == "application/merge-patch+json":
            patched = apply_merge_patch(doc, patch)
        elif ctype == "application/strategic-merge-patch+json":
            if not strategy.strategic_merge_patch:
                raise StatusError.unsupported_media(ctype)
            res = strategy.resource
            patched = apply_strategic_merge_patch(doc, patch, group=res.group, kind=res.kind)
        else:
            raise StatusError.unsupported_media(ctype)
    except PatchError as exc:
        raise StatusError.from_status(exc.to_status()) from exc
    if not isinstance(patched, dict):
        raise StatusError.bad_request("the patch did not produce an object")
    return patched


def _check_preconditions(res: Resource, name: str, old: Obj, options: Obj) -> None:
    """DeleteOptions' preconditions: uid and resourceVersion must match (409). As
    ``rest.BeforeDelete`` checks them, the conflict names the kind (``ConfigMap "a"``)."""
    meta = old["metadata"]
    pre = options.get("preconditions") or {}
    if pre.get("uid") is not None and pre["uid"] != meta.get("uid"):
        raise StatusError.conflict(
            res.group,
            res.kind,
            name,
            f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
            f"({meta.get('uid')}). The object might have been deleted and then recreated",
        )
    rv = pre.get("resourceVersion")
    if rv is not None and rv != meta.get("resourceVersion"):
        raise StatusError.conflict(
            res.group,
            res.kind,
            name,
            f"the ResourceVersion in the precondition ({rv}) does not match the "
            f"ResourceVersion in record ({meta.get('resourceVersion')}). The object might "
            "have been modified",
        )


def _add_propagation_finalizer(new: Obj, options: Obj) -> None:
    """Foreground and Orphan deletion are finalizers (the garbage collector removes them)."""
    policy = options.get("propagationPolicy") or ""
    if not policy and options.get("orphanDependents") is not None:
        policy = "Orphan" if options["orphanDependents"] else "Background"
    meta = new["metadata"]
    finalizers = list(meta.get("finalizers") or [])
    if policy == "Orphan" and "orphan" not in finalizers:
        finalizers.append("orphan")
        finalizers = [f for f in finalizers if f != "foregroundDeletion"]
    elif policy == "Foreground" and "foregroundDeletion" not in finalizers:
        finalizers.append("foregroundDeletion")
        finalizers = [f for f in finalizers if f != "orphan"]
    if finalizers:
        meta["finalizers"] = finalizers
