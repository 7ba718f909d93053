"""Per-kind rules: one strategy per kind, as kube-apiserver's ``pkg/registry/<group>/<kind>``.

The verbs in :mod:`.._rest` are generic; everything that differs by kind is a hook of the
kind's :class:`Strategy`, which ``strategy_for(resource)`` returns. The hook points, in the
order the verbs call them:

- **decoding** (create and update bodies): ``admit_create()`` first on a create (a kind may
  refuse creates: 405), then ``decode(obj)`` (custom resources: pruning, defaulting);
  ``allow_unconditional_update`` says whether a PUT may omit the resourceVersion (422).
- **create**: ``validate(obj)`` (ObjectMeta with the kind's ``name_rule``, then the kind's
  fields), then, once the server has stamped uid/creationTimestamp/generation,
  ``prepare_for_create(obj, ctx)`` (reset status unless ``keeps_status_on_create``; defaults),
  then ``after_write(obj, ctx)``. A kind with ``answers_create`` (the access reviews) is never
  stored: ``answer(obj, who, ctx)`` is the whole create, for the requester ``who``.
- **update** (PUT, PATCH, apply): the hooks are the kind's own, or those of the
  :class:`Subresource` written to (an :class:`UpdateRules` either way);
  ``prepare_for_update(new, old)`` says what of ``old`` is kept (status on the main resource;
  everything but status on ``/status``);
  ``next_generation(new, old)`` sets ``metadata.generation``; ``default_on_update(new)``; and
  ``validate_update(new, old)`` when ``spec_changed(new, old)`` (immutable fields live here).
- **delete**: ``prepare_for_delete(old, new, options, query, ctx)`` (a pod's grace period, a
  namespace's Terminating phase); the object stays while it has finalizers or
  ``deletion_held(obj)`` (and ``after_write`` runs for that write); then
  ``after_delete(obj, ctx)``; ``return_deleted_object`` says what DELETE answers.
- **reads**: ``present(obj)`` (the object as served in the requested version) and
  ``selectable_fields()`` (field selectors beyond the kind's field labels).
- **subresources**: ``subresource(name)`` returns a :class:`Subresource`: ``status`` and
  ``scale`` (with ``scale_paths()``) for every kind, ``namespaces/finalize``,
  ``pods/binding`` and ``pods/eviction``, and the streaming ``pods/log``, ``exec``, ``attach``
  and ``portforward`` (``connect``); see :mod:`._subresource`.

Whatever a hook needs of the server (the clock, the store, the registry, the service address
allocators) comes in a :class:`Context`; strategies themselves keep no state.

To add a kind: write ``<group>/<plural>.py`` with a ``Strategy`` subclass that overrides the
hooks it needs (call ``super()`` to keep the generic part: ObjectMeta validation, status reset,
pod template defaults), and add one line to ``_STRATEGIES`` in :mod:`._lookup`. Shared pieces
live beside their users: ``core/podspec.py`` (pod spec defaults and validation),
``apps/workloads.py`` (selector and template rules), ``_immutable.py`` (``field is immutable``).
"""

from ._base import Strategy as Strategy
from ._base import UpdateRules as UpdateRules
from ._context import Context as Context
from ._context import Verbs as Verbs
from ._lookup import strategy_for as strategy_for
from ._subresource import StreamReply as StreamReply
from ._subresource import Subresource as Subresource

__all__ = [
    "Context",
    "Strategy",
    "StreamReply",
    "Subresource",
    "UpdateRules",
    "Verbs",
    "strategy_for",
]
