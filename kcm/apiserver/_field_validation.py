"""The ``fieldValidation`` query parameter of writes: checked as kube-apiserver checks it.

kube-apiserver 1.24 validates the value (``""``, ``Ignore``, ``Strict``, ``Warn``) but, with
the ``ServerSideFieldValidation`` feature still off, decodes every body as ``Ignore`` does:
unknown and duplicate fields are dropped and merged silently.
"""

from __future__ import annotations

from typing import Final

from ._field_errors import not_supported
from ._status import StatusError

__all__ = ["check_field_validation"]

_DIRECTIVES: Final = ["", "Ignore", "Strict", "Warn"]


def check_field_validation(query: dict[str, str], options_kind: str) -> None:
    """422 for an unknown ``fieldValidation`` (``options_kind``: ``CreateOptions``,
    ``UpdateOptions`` or ``PatchOptions``, as the Status names it)."""
    value = query.get("fieldValidation", "")
    if value not in _DIRECTIVES:
        cause = not_supported("fieldValidation", value, _DIRECTIVES)
        raise StatusError.invalid("meta.k8s.io", options_kind, "", [cause])
