"""A griffe extension for the API reference: kcm's docstrings cite names Sphinx-style
(``:class:`~kcm.errors.ApiError```, ``:meth:`Manager.run```) and end literal-block intros with
``::``; mkdocstrings renders Markdown, so the roles become plain code spans (``~`` keeps the
last dotted part, as Sphinx does) and ``::`` a colon. Behaviour-code citations, ``(R17)``,
``(Q1-Q7, C2)``, ``(§8: note)``, become links to their entries in docs/behaviours.md
(mkdocs-autorefs resolves them, and a strict build fails on one that does not resolve). The
source is unchanged.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import griffe
from markdown.extensions.toc import slugify

__all__ = ["RstRoles", "link_citations", "strip_roles"]

BEHAVIOURS = Path(__file__).resolve().parents[1] / "docs" / "behaviours.md"
# The citation grammar of tests/test_behaviour_codes.py.
_CODE = r"(?:[PRFSIQMLCBD][1-9][0-9]?|§[0-9]{1,2}(?:\.[0-9])?)"
_ITEM = rf"{_CODE}(?:-{_CODE})?"
_CITATION = re.compile(rf"\((?P<codes>{_ITEM}(?:,\s+{_ITEM})*)(?=[):;])")
_ENTRY = re.compile(rf"^### (?P<code>{_CODE})(?P<rest>.*)$", re.MULTILINE)

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|data|attr|mod|exc|obj|const):`(~?)([^`]+)`")
_LITERAL_INTRO = re.compile(r"(?<=\S)::$", re.M)


def strip_roles(text: str) -> str:
    """``text`` with Sphinx roles as code spans and ``::`` literal-block intros as ``:``."""

    def code(match: re.Match[str]) -> str:
        short, target = match.groups()
        return f"`{target.rsplit('.', 1)[-1] if short else target}`"

    return _LITERAL_INTRO.sub(":", _ROLE.sub(code, text))


@cache
def _anchors() -> dict[str, str]:
    """Each behaviour code's heading anchor (toc's slug of the heading text)."""
    text = BEHAVIOURS.read_text(encoding="utf-8")
    return {m["code"]: slugify(m["code"] + m["rest"], "-") for m in _ENTRY.finditer(text)}


def link_citations(text: str, anchors: dict[str, str] | None = None) -> str:
    """``text`` with each cited code (the first of a range) an autorefs link to its entry."""
    known = _anchors() if anchors is None else anchors

    def link(item: str) -> str:
        first = item.split("-")[0]
        return f"[{item}][{known[first]}]" if first in known else item

    def citation(match: re.Match[str]) -> str:
        items = re.split(r"(,\s+)", match["codes"])
        return "(" + "".join(link(i) if not i.startswith(",") else i for i in items)

    return _CITATION.sub(citation, text)


class RstRoles(griffe.Extension):
    """Rewrites every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = link_citations(strip_roles(obj.docstring.value))
