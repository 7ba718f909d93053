"""Strip what changes from run to run out of a scenario's outcomes, keep what the protocol fixes.

Values that differ between two correct servers (or two runs of one) are replaced by stable
placeholders *in order of first appearance*, so relations survive: the same uid seen twice
stays the same ``<uid-1>``, an ownerReference still points at its owner's ``<uid-N>``, and a
resourceVersion a later step sends back matches the one it was read from.

- uids (any UUID text) -> ``<uid-N>``;
- resourceVersions (values of ``resourceVersion`` keys, and the same text inside messages)
  -> ``<rv-N>``; ``continue`` tokens -> ``<continue>``;
- generated names (``metadata.name`` of an object with ``generateName``) ->
  ``<generateName><gen-N>``, wherever the name appears later;
- RFC 3339 times -> ``<time>``; durations of ``managedFields`` are left as they are; times on
  2001-02-03 are kept (scenarios write that date themselves, to see how a server formats it);
- ``managedFields`` entries in kube-apiserver's order with the times gone (operation, manager,
  apiVersion, subresource): kube orders by the second an entry was written first, so two writes
  a second boundary apart come out in either order (the same on both servers);
- numbers in messages that name the server's current resourceVersion -> ``<rv>`` (also the
  oldest one a watch can start from, in "too old resource version: 1 (<rv>)"), and the two
  resourceVersions of a failed precondition -> their placeholders;
- fields kept by a ``keep`` path are treated like the path's last part
  (``metadata.resourceVersion`` like ``resourceVersion``);
- the random suffix of the ServiceAccount token volume (``kube-api-access-x7k2p``) ->
  ``kube-api-access-<rand>``;
- Go pointer addresses in ``%#v`` dumps inside messages (``(*bool)(0xc009b8f1e0)``) ->
  ``(*bool)(<ptr>)``, and bare heap addresses (``{0xc01202a9c0 {...}}``, a 500 of
  server-side apply) -> ``<ptr>``;
- non-breaking spaces -> spaces (go-cmp's diffs, in the 422s for pod and PVC spec updates,
  pick spaces or non-breaking spaces at random per server process);
- ages in tables and kubectl output (``0s``, ``5m12s``, ``3d``) -> ``<age>``;
- JSON Web Tokens (a TokenRequest's token, ``kubectl create token``) -> ``<jwt>``;
- ``kubectl diff``'s temporary directories (``/tmp/LIVE-2118431995``) -> ``/tmp/LIVE-<rand>``
  and its file times (``2026-11-25 21:51:10.150974536 +0000``) -> ``<time>``.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Normaliser", "keep_paths", "sort_managed_fields"]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"(?!2001-02-03T)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
_CURRENT_RV = re.compile(r"(current(?: resource version)?:? )\d+")
_AGE = re.compile(r"(?<![\w.:/-])\d+(?:s|m|h|d|y)(?:\d+(?:s|m|h))?(?![\w.:/-])")
_TOKEN_VOLUME = re.compile(r"kube-api-access-[a-z0-9]{5}\b")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
_DIFF_DIR = re.compile(r"/(LIVE|MERGED)-\d+/")
_DIFF_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [+-]\d{4}")
_GO_POINTER = re.compile(r"\)\(0x[0-9a-f]+\)")
_GO_ADDRESS = re.compile(r"\b0xc[0-9a-f]{9}\b")
_TOO_OLD_RV = re.compile(r"(too old resource version: \d+ \()\d+(\))")
_PRECONDITION_RV = re.compile(
    r"(ResourceVersion in (?:the precondition \(|record \(|precondition: |object meta: ))(\d+)"
)
_VOLATILE_KEYS = {"continue": "<continue>", "remainingItemCount": None}


def _leaf(key: str | None) -> str | None:
    """The last part of a ``keep`` path (``metadata.resourceVersion`` -> ``resourceVersion``), so
    kept fields are normalised like the same fields in a whole body."""
    return key.rsplit(".", 1)[-1] if key else key


class Normaliser:
    """One per scenario run: placeholders are numbered across all of the scenario's steps."""

    def __init__(self) -> None:
        self._uids: dict[str, str] = {}
        self._rvs: dict[str, str] = {}
        self._names: dict[str, str] = {}

    # -- learning what to replace --------------------------------------------------------

    def _learn(self, value: Any) -> None:
        if isinstance(value, dict):
            meta = value.get("metadata")
            if isinstance(meta, dict):
                gen, name = meta.get("generateName"), meta.get("name")
                if isinstance(gen, str) and isinstance(name, str) and self._generated(gen, name):
                    self._names[name] = f"{gen}<gen-{len(self._names) + 1}>"
            for key, item in value.items():
                if _leaf(key) == "resourceVersion" and isinstance(item, str) and item:
                    self._rvs.setdefault(item, f"<rv-{len(self._rvs) + 1}>")
                else:
                    self._learn(item)
        elif isinstance(value, list):
            for item in value:
                self._learn(item)
        elif isinstance(value, str):
            for uid in _UUID.findall(value):
                self._uids.setdefault(uid, f"<uid-{len(self._uids) + 1}>")

    def learn_generated_name(self, generate_name: str, name: str) -> None:
        """A name the server generated that no object shows (it is in a Status's details)."""
        if self._generated(generate_name, name):
            self._names[name] = f"{generate_name}<gen-{len(self._names) + 1}>"

    def _generated(self, gen: str, name: str) -> bool:
        return name != gen and name.startswith(gen) and name not in self._names

    # -- replacing ---------------------------------------------------------------------------

    def _text(self, text: str) -> str:
        text = _JWT.sub("<jwt>", text)
        text = _DIFF_DIR.sub(r"/\1-<rand>/", text)
        text = _DIFF_TIME.sub("<time>", text)
        text = _TIME.sub("<time>", text)
        text = _UUID.sub(lambda m: self._uids.get(m.group(0), "<uid>"), text)
        for name, placeholder in sorted(self._names.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(name, placeholder)
        text = _CURRENT_RV.sub(r"\1<rv>", text)
        text = _TOO_OLD_RV.sub(r"\1<rv>\2", text)
        text = _PRECONDITION_RV.sub(lambda m: m.group(1) + self._rvs.get(m.group(2), "<rv>"), text)
        text = _TOKEN_VOLUME.sub("kube-api-access-<rand>", text)
        text = _GO_POINTER.sub(")(<ptr>)", text)
        text = _GO_ADDRESS.sub("<ptr>", text)
        text = text.replace("\u00a0", " ")
        return _AGE.sub("<age>", text)

    def _value(self, value: Any, key: str | None = None) -> Any:
        key = _leaf(key)
        if key in _VOLATILE_KEYS and value not in (None, ""):
            return _VOLATILE_KEYS[key]
        if key == "resourceVersion" and isinstance(value, str) and value:
            return self._rvs.get(value, "<rv>")
        if isinstance(value, dict):
            return {
                k: self._value(v, k)
                for k, v in value.items()
                if not (k in _VOLATILE_KEYS and _VOLATILE_KEYS[k] is None)
            }
        if isinstance(value, list):
            items = [self._value(v) for v in value]
            return sort_managed_fields(items) if key == "managedFields" else items
        if isinstance(value, str):
            return self._text(value)
        return value

    def __call__(self, outcome: Any) -> Any:
        """Normalise one outcome (learning the values it introduces first)."""
        self._learn(outcome)
        return self._value(outcome)

    def rv_placeholder(self, rv: str) -> str:
        return self._rvs.get(rv, "<rv>")


_PART = re.compile(r"([^.\[]+)|\[([^=\]]+)=([^\]]*)\]")


def sort_managed_fields(entries: list[Any]) -> list[Any]:
    """Entries ordered as kube-apiserver orders those written in one second."""

    def key(entry: Any) -> tuple[str, ...]:
        if not isinstance(entry, dict):
            return ("",)
        fields = ("operation", "manager", "apiVersion", "subresource")
        return tuple(str(entry.get(f, "")) for f in fields)

    return sorted(entries, key=key)


def _parts(path: str) -> list[str | tuple[str, str]]:
    """``resources[name=pods/log].verbs`` -> ``["resources", ("name", "pods/log"), "verbs"]``
    (dots inside ``[...]`` do not split: ``groups[name=rbac.authorization.k8s.io]``)."""
    return [
        m.group(1) if m.group(1) is not None else (m.group(2), m.group(3))
        for m in _PART.finditer(path)
    ]


def _get(value: Any, path: str) -> Any:
    for part in _parts(path):
        if isinstance(part, tuple):
            key, wanted = part
            items = value if isinstance(value, list) else []
            value = next((i for i in items if isinstance(i, dict) and i.get(key) == wanted), None)
        elif part == "keys()":
            value = sorted(value) if isinstance(value, dict) else None
        elif isinstance(value, list) and part.isdigit():
            index = int(part)
            value = value[index] if index < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def keep_paths(body: Any, paths: tuple[str, ...] | None) -> Any:
    """``body`` reduced to the dotted ``paths`` (``{"spec.replicas": 3, ...}``); a Status is
    always kept whole (its reason, message and causes are the contract).

    A path part ``[key=value]`` picks the first item of a list whose ``key`` is ``value``
    (``resources[name=pods/log]``: a discovery entry by name, wherever it is in the list;
    ``None`` when absent); a last part ``keys()`` gives the sorted keys of a mapping
    (``keys()`` alone: the body's top-level keys, not their values)."""
    if paths is None or not isinstance(body, dict) or body.get("kind") == "Status":
        return body
    return {path: _get(body, path) for path in paths}
