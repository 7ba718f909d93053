"""Behaviour codes cited in comments and docstrings resolve to entries of docs/behaviours.md.

A citation is a parenthesised group that starts with codes: ``(R17)``, ``(R7, R10, B2)``,
``(Q1-Q7)``, ``(C5: two minutes)``, ``(§8)``. A range cites every code in it. Checks:

* every code cited that way has a ``### <code>`` heading in docs/behaviours.md;
* a code written in any other way in a comment or docstring (``R17 table``, ``client-go
  Q12``) is flagged, so that citations keep the one form the first check can read.
* the files and test functions the entries name exist.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "behaviours.md"
SCANNED = ("kcm", "tests")
SELF = Path(__file__).resolve()

FAMILIES = "PRFSIQMLCBD"
CODE = rf"(?:[{FAMILIES}][1-9][0-9]?|§[0-9]{{1,2}}(?:\.[0-9])?)"
ITEM = rf"{CODE}(?:-{CODE})?"
_ITEM = re.compile(ITEM)
CITATION = re.compile(rf"\((?P<codes>{ITEM}(?:,\s+{ITEM})*)(?=[):;])")
BARE_CODE = re.compile(rf"(?<![\w§.]){CODE}(?!\w)")
ENTRY = re.compile(rf"^### (?P<code>{CODE})(?:\s|$)", re.MULTILINE)
DOC_PATH = re.compile(r"`((?:kcm|tests)/[\w/.]+?)`")
DOC_TEST = re.compile(r"`(test_\w+)`")

_BEFORE_STATEMENT = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
_SKIPPED = {tokenize.NL, tokenize.COMMENT}


def _expand(item: str) -> list[str]:
    """``Q9-Q11`` → ``Q9, Q10, Q11``; a single code → itself."""
    if "-" not in item:
        return [item]
    first, last = item.split("-")
    family, start, end = first[0], int(first[1:]), int(last[1:])
    if last[0] != family or start >= end:
        raise ValueError(f"malformed range {item!r}: one family, ascending")
    return [f"{family}{n}" for n in range(start, end + 1)]


def _text_tokens(path: Path) -> list[tuple[int, str]]:
    """(first line, raw text) of every comment and docstring in ``path``.

    A docstring here is any string that is a statement of its own (module, class, function
    and attribute docstrings); strings inside expressions are data (``"R1"`` as an event
    reason) and are not read.
    """
    source = path.read_text(encoding="utf-8")
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    code = [t for t in tokens if t.type not in _SKIPPED]
    texts = [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]
    for i, tok in enumerate(code):
        if tok.type != tokenize.STRING:
            continue
        before = code[i - 1].type if i else tokenize.NEWLINE
        after = code[i + 1].type if i + 1 < len(code) else tokenize.NEWLINE
        if before in _BEFORE_STATEMENT and after in (tokenize.NEWLINE, tokenize.ENDMARKER):
            texts.append((tok.start[0], tok.string))
    return sorted(texts)


def _python_files() -> list[Path]:
    files = [p for top in SCANNED for p in sorted((ROOT / top).rglob("*.py"))]
    return [p for p in files if p.resolve() != SELF]


def _scan() -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    """(citations, stray codes), each as (file, line, code)."""
    cited: list[tuple[str, int, str]] = []
    stray: list[tuple[str, int, str]] = []
    for path in _python_files():
        name = str(path.relative_to(ROOT))
        for first_line, text in _text_tokens(path):
            covered: list[tuple[int, int]] = []
            for match in CITATION.finditer(text):
                covered.append(match.span("codes"))
                for item in _ITEM.finditer(text, match.start("codes"), match.end("codes")):
                    line = first_line + text.count("\n", 0, item.start())
                    cited.extend((name, line, code) for code in _expand(item.group()))
            for match in BARE_CODE.finditer(text):
                if not any(start <= match.start() < end for start, end in covered):
                    line = first_line + text.count("\n", 0, match.start())
                    stray.append((name, line, match.group()))
    return cited, stray


def _entries() -> set[str]:
    return set(ENTRY.findall(DOC.read_text(encoding="utf-8")))


def test_every_cited_code_has_an_entry() -> None:
    entries = _entries()
    cited, _ = _scan()
    assert len(cited) > 100, "the scan found almost no citations: is the pattern broken?"
    missing = [f"{f}:{line}: {code}" for f, line, code in cited if code not in entries]
    assert not missing, "codes cited with no entry in docs/behaviours.md:\n" + "\n".join(missing)


def test_codes_are_cited_in_the_one_form() -> None:
    _, stray = _scan()
    lines = [f"{f}:{line}: {code}" for f, line, code in stray]
    assert not lines, (
        "behaviour codes outside a citation: write them as '(R17)', '(R7, R10)', '(Q1-Q7)' or "
        "'(C5: note)' (see docs/behaviours.md), or reword if it is not a behaviour code:\n"
        + "\n".join(lines)
    )


def test_entries_are_unique_and_name_what_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    codes = ENTRY.findall(text)
    duplicates = sorted({code for code in codes if codes.count(code) > 1})
    assert not duplicates, f"codes with more than one entry: {duplicates}"
    missing = sorted({p for p in DOC_PATH.findall(text) if not (ROOT / p).exists()})
    assert not missing, "docs/behaviours.md names files that do not exist:\n" + "\n".join(missing)
    defined = {
        name
        for path in (ROOT / "tests").rglob("*.py")
        for name in re.findall(r"def (test_\w+)", path.read_text(encoding="utf-8"))
    }
    unknown = sorted(set(DOC_TEST.findall(text)) - defined)
    assert not unknown, "docs/behaviours.md names tests that do not exist:\n" + "\n".join(unknown)


def test_the_citation_pattern() -> None:
    found = [m.group("codes") for m in CITATION.finditer("a (R17) b (C5: x) c (R7, R10, B2)")]
    assert found == ["R17", "C5", "R7, R10, B2"]
    assert _expand("Q9-Q11") == ["Q9", "Q10", "Q11"]
    assert not CITATION.search("(see R17) (E501) (HTTP 410) (T0)")
    assert [m.group() for m in BARE_CODE.finditer("R17 table, E501, I/O, UTF8, B017, §8.")] == [
        "R17",
        "§8",
    ]
