"""A griffe extension for the API reference: kcm's docstrings cite names Sphinx-style
(``:class:`~kcm.errors.ApiError```, ``:meth:`Manager.run```) and end literal-block intros with
``::``; mkdocstrings renders Markdown, so the roles become plain code spans (``~`` keeps the
last dotted part, as Sphinx does) and ``::`` a colon. The source is unchanged.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

__all__ = ["RstRoles", "strip_roles"]

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|data|attr|mod|exc|obj|const):`(~?)([^`]+)`")
_LITERAL_INTRO = re.compile(r"(?<=\S)::$", re.M)


def strip_roles(text: str) -> str:
    """``text`` with Sphinx roles as code spans and ``::`` literal-block intros as ``:``."""

    def code(match: re.Match[str]) -> str:
        short, target = match.groups()
        return f"`{target.rsplit('.', 1)[-1] if short else target}`"

    return _LITERAL_INTRO.sub(":", _ROLE.sub(code, text))


class RstRoles(griffe.Extension):
    """Rewrites every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = strip_roles(obj.docstring.value)
