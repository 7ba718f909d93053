"""Kubernetes label and field selectors: parse, build, print and match.

This is the one implementation used by the client (query strings), listers (in-memory matching
over large caches), controllers and the embedded API server. It follows
``k8s.io/apimachinery/pkg/labels`` and ``k8s.io/apimachinery/pkg/fields``:

* Label selectors: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``
  (plus the numeric ``a>1`` / ``a<1`` of the Go parser), comma-separated and ANDed. Keys must be
  qualified names and values label values, checked with the same messages as kube-apiserver.
  A missing label satisfies ``!=`` and ``notin`` (as in Go).
* Field selectors: ``a=b``, ``a==b``, ``a!=b``, comma-separated and ANDed; in values ``\\,``
  ``\\=`` and ``\\\\`` are escapes, and an unescaped ``,`` or ``=`` is an error.

Selectors are immutable values: equal selectors compare and hash equal, and ``str()`` gives a
canonical text (requirements sorted by key) that parses back to an equal selector. Matching is
compiled once per selector into a single Python function, so listers can run it over 100k
objects cheaply.
"""

from __future__ import annotations

import enum
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Concatenate, Final, Generic, ParamSpec, TypeVar, final

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Operator",
    "Requirement",
    "SelectorParseError",
    "label_key_errors",
    "label_value_errors",
]


class SelectorParseError(ValueError):
    """A selector string (or metav1.LabelSelector) is malformed; the message says where and why.

    Attributes:
        selector: the text being parsed (empty when building from a model or a builder).
        detail: the text of Go's parser's error (``found ',', expected: identifier after
            ','``; ``unable to parse requirement: values[0][app]: Invalid value: ...``), which
            kube-apiserver puts in its 400 BadRequest message.
    """

    def __init__(self, message: str, *, selector: str = "", detail: str | None = None) -> None:
        super().__init__(message)
        self.selector = selector
        self.detail = detail if detail is not None else message


# --------------------------------------------------------------------------------------------
# Validation of label keys and values (k8s.io/apimachinery/pkg/util/validation), shared with
# the embedded API server so both give kube-apiserver's exact messages.
# --------------------------------------------------------------------------------------------


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    # validation.RegexError, double spaces and all.
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += f"'{example}', "
    return msg + f"regex used for validation is '{fmt}')"


_QNAME_CHAR_FMT = "[A-Za-z0-9]"
_QNAME_EXT_CHAR_FMT = "[-A-Za-z0-9_.]"
_QUALIFIED_NAME_FMT = f"({_QNAME_CHAR_FMT}{_QNAME_EXT_CHAR_FMT}*)?{_QNAME_CHAR_FMT}"
_QUALIFIED_NAME_RE = re.compile(f"^{_QUALIFIED_NAME_FMT}$")
_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_QUALIFIED_NAME_MAX = 63
_LABEL_VALUE_MAX = 63
_DNS1123_SUBDOMAIN_MAX = 253


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def _dns1123_subdomain_errors(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(_max_len_error(_DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(key: str) -> list[str]:
    """Why ``key`` is not a valid label (or annotation) key: k8s ``IsQualifiedName``.

    Returns:
        kube-apiserver's messages, or an empty list when the key is valid.
    """
    if _QUALIFIED_NAME_RE.match(key) and len(key) <= _QUALIFIED_NAME_MAX:
        return []  # fast path: no prefix, valid name
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain_errors(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > _QUALIFIED_NAME_MAX:
        errs.append("name part " + _max_len_error(_QUALIFIED_NAME_MAX))
    if name and not _QUALIFIED_NAME_RE.match(name):
        errs.append(
            "name part "
            + _regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value_errors(value: str) -> list[str]:
    """Why ``value`` is not a valid label value: k8s ``IsValidLabelValue``.

    Returns:
        kube-apiserver's messages, or an empty list when the value is valid.
    """
    errs: list[str] = []
    if len(value) > _LABEL_VALUE_MAX:
        errs.append(_max_len_error(_LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(
            _regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errs


# --------------------------------------------------------------------------------------------
# Label selector requirements
# --------------------------------------------------------------------------------------------


class Operator(enum.Enum):
    """A label selector operator; the value is its spelling in selector text."""

    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_SET_OPS: Final = frozenset({Operator.IN, Operator.NOT_IN})
_UNARY_OPS: Final = frozenset({Operator.EXISTS, Operator.DOES_NOT_EXIST})
_NUMERIC_OPS: Final = frozenset({Operator.GREATER_THAN, Operator.LESS_THAN})
_MODEL_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}
_INT_RE = re.compile(r"^[+-]?[0-9]+$")


@final
class Requirement:
    """One condition of a label selector, e.g. ``tier in (a,b)``.

    Built with the class methods (``Requirement.eq("app", "web")``) or the constructor, which
    validates like ``labels.NewRequirement``.

    Raises:
        SelectorParseError: the key or a value is invalid, or the value count does not fit the
            operator (``in``/``notin`` need at least one, ``=``/``!=``/``gt``/``lt`` exactly
            one, ``exists``/``!`` none).
    """

    __slots__ = ("_hash", "key", "operator", "values")

    key: str
    operator: Operator
    values: tuple[str, ...]
    _hash: int

    def __init__(self, key: str, operator: Operator | str, values: Iterable[str] = ()) -> None:
        op = operator if isinstance(operator, Operator) else _parse_operator_name(operator)
        vals = tuple(sorted(set(values)))
        errs = label_key_errors(key)
        if errs:
            raise SelectorParseError(f"invalid label key {key!r}: {'; '.join(errs)}")
        if op in _SET_OPS:
            if not vals:
                raise SelectorParseError(
                    f"{key}: for 'in', 'notin' operators, values set can't be empty"
                )
        elif op in _UNARY_OPS:
            if vals:
                raise SelectorParseError(
                    f"{key}: values set must be empty for exists and does not exist"
                )
        elif len(vals) != 1:
            raise SelectorParseError(
                f"{key}: exact-match compatibility requires one single value"
                if op not in _NUMERIC_OPS
                else f"{key}: for 'Gt', 'Lt' operators, exactly one value is required"
            )
        if op in _NUMERIC_OPS:
            if not _INT_RE.match(vals[0]):
                raise SelectorParseError(
                    f"{key}: for 'Gt', 'Lt' operators, the value must be an integer"
                )
        else:
            for v in vals:
                verrs = label_value_errors(v)
                if verrs:
                    raise SelectorParseError(
                        f"invalid label value {v!r} for key {key!r}: {'; '.join(verrs)}"
                    )
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "operator", op)
        object.__setattr__(self, "values", vals)
        object.__setattr__(self, "_hash", hash((key, op, vals)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Requirement is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Requirement, (self.key, self.operator, self.values))

    # Named constructors -------------------------------------------------------------------

    @classmethod
    def eq(cls, key: str, value: str) -> Requirement:
        """``key=value``: the label is present with this value."""
        return cls(key, Operator.EQUALS, (value,))

    @classmethod
    def ne(cls, key: str, value: str) -> Requirement:
        """``key!=value``: the label is absent or has another value."""
        return cls(key, Operator.NOT_EQUALS, (value,))

    @classmethod
    def in_(cls, key: str, values: Iterable[str]) -> Requirement:
        """``key in (values)``: the label is present with one of these values."""
        return cls(key, Operator.IN, values)

    @classmethod
    def notin(cls, key: str, values: Iterable[str]) -> Requirement:
        """``key notin (values)``: the label is absent or has none of these values."""
        return cls(key, Operator.NOT_IN, values)

    @classmethod
    def exists(cls, key: str) -> Requirement:
        """``key``: the label is present (any value)."""
        return cls(key, Operator.EXISTS)

    @classmethod
    def does_not_exist(cls, key: str) -> Requirement:
        """``!key``: the label is absent."""
        return cls(key, Operator.DOES_NOT_EXIST)

    @classmethod
    def gt(cls, key: str, value: int) -> Requirement:
        """``key>value``: the label is an integer greater than ``value``."""
        return cls(key, Operator.GREATER_THAN, (str(value),))

    @classmethod
    def lt(cls, key: str, value: int) -> Requirement:
        """``key<value``: the label is an integer less than ``value``."""
        return cls(key, Operator.LESS_THAN, (str(value),))

    # Behaviour ----------------------------------------------------------------------------

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether ``labels`` satisfies this requirement (Go ``Requirement.Matches``)."""
        labels = labels or {}
        op = self.operator
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if op is Operator.EQUALS or op is Operator.IN:
            return value in self.values
        if op is Operator.NOT_EQUALS or op is Operator.NOT_IN:
            return value not in self.values
        if op is Operator.GREATER_THAN:
            return _int_compare(value, int(self.values[0]), greater=True)
        return _int_compare(value, int(self.values[0]), greater=False)

    def _sort_key(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.key, self.operator.value, self.values)

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        if op is Operator.EQUALS:
            return f"{self.key}={self.values[0]}"
        if op is Operator.NOT_EQUALS:
            return f"{self.key}!={self.values[0]}"
        if op is Operator.GREATER_THAN:
            return f"{self.key}>{self.values[0]}"
        if op is Operator.LESS_THAN:
            return f"{self.key}<{self.values[0]}"
        return f"{self.key} {op.value} ({','.join(self.values)})"

    def __repr__(self) -> str:
        return f"Requirement({self.key!r}, {self.operator.name}, {list(self.values)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Requirement):
            return NotImplemented
        return (self.key, self.operator, self.values) == (other.key, other.operator, other.values)

    def __hash__(self) -> int:
        return self._hash


def _int_compare(value: str | None, bound: int, *, greater: bool) -> bool:
    if value is None or not _INT_RE.match(value):
        return False
    n = int(value)
    return n > bound if greater else n < bound


def _parse_operator_name(name: str) -> Operator:
    spelled = {"==": Operator.EQUALS, ">": Operator.GREATER_THAN, "<": Operator.LESS_THAN}
    if name in spelled:
        return spelled[name]
    if name in _MODEL_OPERATORS:
        return _MODEL_OPERATORS[name]
    try:
        return Operator(name)
    except ValueError:
        raise SelectorParseError(
            f"{name!r} is not a valid label selector operator "
            "(use In, NotIn, Exists, DoesNotExist, =, ==, !=, in, notin, gt, lt)"
        ) from None


# --------------------------------------------------------------------------------------------
# The label selector lexer and parser (a port of labels/selector.go)
# --------------------------------------------------------------------------------------------

_IDENT, _EOS, _COMMA, _OPEN, _CLOSE, _NOT, _EQ, _DEQ, _NEQ, _GT, _LT, _IN, _NOTIN = range(13)
_SYMBOLS: Final = {
    "!=": _NEQ,
    "==": _DEQ,
    "!": _NOT,
    "=": _EQ,
    "(": _OPEN,
    ")": _CLOSE,
    ",": _COMMA,
    ">": _GT,
    "<": _LT,
}
_TOKEN_RE = re.compile(r"\s*(!=|==|[!=(),><]|[^\s!=(),><]+|$)")


def _lex(text: str) -> list[tuple[int, str]]:
    tokens: list[tuple[int, str]] = []
    pos = 0
    n = len(text)
    while True:
        m = _TOKEN_RE.match(text, pos)
        if m is None:  # pragma: no cover - the pattern always matches
            raise SelectorParseError(f"unable to tokenize {text!r}", selector=text)
        lit = m.group(1)
        pos = m.end()
        if not lit:
            if pos < n:  # pragma: no cover
                raise SelectorParseError(f"unable to tokenize {text!r}", selector=text)
            tokens.append((_EOS, ""))
            return tokens
        sym = _SYMBOLS.get(lit)
        if sym is not None:
            tokens.append((sym, lit))
        elif lit == "in":
            tokens.append((_IN, lit))
        elif lit == "notin":
            tokens.append((_NOTIN, lit))
        else:
            tokens.append((_IDENT, lit))


def _go_quote(text: str) -> str:
    """Go's ``%q`` of a string (printable text as is, quotes and backslashes escaped)."""
    return json.dumps(text, ensure_ascii=False)


def _go_requirement_errors(key: str, op: Operator, values: list[str]) -> str:
    """What Go's ``labels.NewRequirement`` says about an invalid requirement: its
    ``field.ErrorList`` aggregated (``values[0][app]: Invalid value: "-web": ...``; several
    errors as ``[e1, e2]``)."""
    errs: list[str] = []
    key_errs = label_key_errors(key)
    if key_errs:
        errs.append(f"key: Invalid value: {_go_quote(key)}: {'; '.join(key_errs)}")
    listed = "[]string{" + ", ".join(_go_quote(v) for v in values) + "}"
    if op in _SET_OPS and not values:
        errs.append(
            f"values: Invalid value: {listed}: for 'in', 'notin' operators, values set can't "
            "be empty"
        )
    elif op in _NUMERIC_OPS:
        if len(values) != 1:
            errs.append(
                f"values: Invalid value: {listed}: for 'Gt', 'Lt' operators, exactly one value "
                "is required"
            )
        errs.extend(
            f"values[{i}]: Invalid value: {_go_quote(v)}: for 'Gt', 'Lt' operators, the value "
            "must be an integer"
            for i, v in enumerate(values)
            if not _INT_RE.match(v)
        )
    for i, v in enumerate(values):
        value_errs = label_value_errors(v)
        if value_errs:
            errs.append(
                f"values[{i}][{key}]: Invalid value: {_go_quote(v)}: {'; '.join(value_errs)}"
            )
    unique = list(dict.fromkeys(errs))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class _Parser:
    __slots__ = ("pos", "text", "tokens")

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _lex(text)
        self.pos = 0

    def _fail(self, message: str, detail: str | None = None) -> SelectorParseError:
        """``detail`` is Go's text where it differs from ``message`` (a requirement's
        validation errors, as ``field.ErrorList``)."""
        return SelectorParseError(
            f"unable to parse label selector {self.text!r}: {message}",
            selector=self.text,
            detail=message if detail is None else detail,
        )

    def peek(self, values: bool = False) -> tuple[int, str]:
        tok, lit = self.tokens[self.pos]
        if values and tok in (_IN, _NOTIN):
            tok = _IDENT
        return tok, lit

    def take(self, values: bool = False) -> tuple[int, str]:
        result = self.peek(values)
        if result[0] != _EOS:
            self.pos += 1
        return result

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.peek(values=True)
            if tok in (_IDENT, _NOT):
                try:
                    reqs.append(self.requirement())
                except SelectorParseError as exc:  # Go wraps what a requirement fails on
                    exc.detail = f"unable to parse requirement: {exc.detail}"
                    raise
                tok, lit = self.take(values=True)
                if tok == _EOS:
                    return reqs
                if tok == _COMMA:
                    tok2, lit2 = self.peek(values=True)
                    if tok2 not in (_IDENT, _NOT):
                        raise self._fail(f"found '{lit2}', expected: identifier after ','")
                    continue
                raise self._fail(f"found '{lit}', expected: ',' or 'end of string'")
            if tok == _EOS:
                return reqs
            raise self._fail(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        op: Operator | None = None
        tok, lit = self.take(values=True)
        if tok == _NOT:
            op = Operator.DOES_NOT_EXIST
            tok, lit = self.take(values=True)
        if tok != _IDENT:
            raise self._fail(f"found '{lit}', expected: identifier")
        key = lit
        errs = label_key_errors(key)
        if errs:
            raise self._fail(
                f"invalid label key {key!r}: {'; '.join(errs)}",
                f"key: Invalid value: {_go_quote(key)}: {'; '.join(errs)}",
            )
        nxt, _ = self.peek(values=True)
        if nxt in (_EOS, _COMMA):
            op = op or Operator.EXISTS
        if op is not None:
            return self._build(key, op, ())
        tok, lit = self.take()
        ops = {
            _IN: Operator.IN,
            _NOTIN: Operator.NOT_IN,
            _EQ: Operator.EQUALS,
            _DEQ: Operator.EQUALS,
            _NEQ: Operator.NOT_EQUALS,
            _GT: Operator.GREATER_THAN,
            _LT: Operator.LESS_THAN,
        }
        if tok not in ops:
            raise self._fail(f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt")
        op = ops[tok]
        values = self.set_values() if op in _SET_OPS else self.exact_value()
        return self._build(key, op, values)

    def _build(self, key: str, op: Operator, values: Iterable[str]) -> Requirement:
        vals = sorted(set(values))
        try:
            return Requirement(key, op, vals)
        except SelectorParseError as exc:
            raise self._fail(str(exc), _go_requirement_errors(key, op, vals)) from None

    def exact_value(self) -> tuple[str, ...]:
        tok, lit = self.peek(values=True)
        if tok in (_EOS, _COMMA):
            return ("",)
        tok, lit = self.take(values=True)
        if tok == _IDENT:
            return (lit,)
        raise self._fail(f"found '{lit}', expected: identifier")

    def set_values(self) -> set[str]:
        tok, lit = self.take(values=True)
        if tok != _OPEN:
            raise self._fail(f"found '{lit}', expected: '('")
        tok, lit = self.peek(values=True)
        if tok == _CLOSE:  # "()" is the set {""}, as in Go
            self.take()
            return {""}
        if tok not in (_IDENT, _COMMA):
            raise self._fail(f"found '{lit}', expected: ',', ')' or identifier")
        values: set[str] = set()
        while True:
            tok, lit = self.take(values=True)
            if tok == _IDENT:
                values.add(lit)
                tok2, lit2 = self.peek(values=True)
                if tok2 == _COMMA:
                    self.take()
                    tok3, _ = self.peek(values=True)
                    if tok3 == _CLOSE:  # "a,)"
                        values.add("")
                        self.take()
                        return values
                    continue
                if tok2 == _CLOSE:
                    self.take()
                    return values
                raise self._fail(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:  # "(,", ",,"
                values.add("")
                tok2, _ = self.peek(values=True)
                if tok2 == _CLOSE:
                    self.take()
                    return values
                continue
            raise self._fail(f"found '{lit}', expected: ',', or identifier")


# --------------------------------------------------------------------------------------------
# Builder methods that work on the class (starting from "everything") and on instances
# --------------------------------------------------------------------------------------------

_S = TypeVar("_S")
_R = TypeVar("_R")
_P = ParamSpec("_P")


class _chain(Generic[_S, _P, _R]):
    """A method usable on the class (starting from the empty selector) and on instances."""

    def __init__(self, func: Callable[Concatenate[_S, _P], _R]) -> None:
        self.func = func
        self.__doc__ = func.__doc__

    def __get__(self, obj: _S | None, owner: type[_S]) -> Callable[_P, _R]:
        target: Any = obj if obj is not None else owner.everything()  # type: ignore[attr-defined]
        return functools.partial(self.func, target)


@functools.lru_cache(maxsize=4096)
def _compile_labels(
    reqs: tuple[Requirement, ...],
) -> Callable[[Mapping[str, str] | None], bool]:
    """Generate one Python function testing every requirement; all constants are bound names.

    Only equalities (every ``matchLabels`` selector, most selectors there are) need no code:
    they hold when the wanted pairs are a subset of the labels' items, a C-speed dict-view
    comparison, and ``exec`` costs more than a thousand such matches.
    """
    if not reqs:
        return lambda labels: True
    if all(r.operator is Operator.EQUALS for r in reqs):
        wanted = {r.key: r.values[0] for r in reqs}.items()

        def _match_equal(labels: Mapping[str, str] | None) -> bool:
            return bool(labels) and wanted <= labels.items()  # type: ignore[union-attr]

        return _match_equal
    env: dict[str, Any] = {"_int_compare": _int_compare}
    terms: list[str] = []
    for i, r in enumerate(reqs):
        k = f"k{i}"
        env[k] = r.key
        op = r.operator
        if op is Operator.EXISTS:
            terms.append(f"{k} in labels")
        elif op is Operator.DOES_NOT_EXIST:
            terms.append(f"{k} not in labels")
        elif op is Operator.EQUALS:
            env[f"v{i}"] = r.values[0]
            terms.append(f"get({k}) == v{i}")
        elif op is Operator.NOT_EQUALS:
            env[f"v{i}"] = r.values[0]
            terms.append(f"get({k}) != v{i}")
        elif op in _SET_OPS:
            env[f"v{i}"] = frozenset(r.values)
            terms.append(f"get({k}) {'in' if op is Operator.IN else 'not in'} v{i}")
        else:
            env[f"v{i}"] = int(r.values[0])
            greater = op is Operator.GREATER_THAN
            terms.append(f"_int_compare(get({k}), v{i}, greater={greater})")
    src = (
        "def _match(labels):\n"
        "    if not labels:\n"
        "        labels = {}\n"
        "    get = labels.get\n"
        f"    return {' and '.join(terms)}\n"
    )
    exec(src, env)  # names only; every constant lives in env
    fn: Callable[[Mapping[str, str] | None], bool] = env["_match"]
    return fn


def _match_nothing(labels: Mapping[str, str] | None) -> bool:
    return False


@final
class LabelSelector:
    """An immutable label selector: an AND of :class:`Requirement`.

    Build one with :meth:`parse`, :meth:`from_model`, :meth:`from_labels`, the chainable
    builder (``LabelSelector.eq("app", "web").in_("tier", ["a", "b"]).exists("x")``) or
    ``LabelSelector([Requirement...])``.

    ``everything()`` (no requirements) matches every object; ``nothing()`` matches none. As in
    Go, ``str(nothing())`` is ``""``: only ``nothing`` does not round-trip through text.
    """

    __slots__ = ("_hash", "_match", "_nothing", "requirements")

    requirements: tuple[Requirement, ...]
    _nothing: bool
    _hash: int
    _match: Callable[[Mapping[str, str] | None], bool]

    def __init__(self, requirements: Iterable[Requirement] = (), *, _nothing: bool = False):
        reqs = tuple(sorted(set(requirements), key=Requirement._sort_key))
        object.__setattr__(self, "requirements", reqs)
        object.__setattr__(self, "_nothing", _nothing)
        object.__setattr__(self, "_hash", hash((reqs, _nothing)))
        match = _match_nothing if _nothing else _compile_labels(reqs)
        object.__setattr__(self, "_match", match)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("LabelSelector is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        if self._nothing:
            return (LabelSelector.nothing, ())
        return (LabelSelector, (self.requirements,))

    # Constructors -------------------------------------------------------------------------

    @classmethod
    def everything(cls) -> LabelSelector:
        """The selector with no requirements: matches every label set."""
        return _EVERYTHING

    @classmethod
    def nothing(cls) -> LabelSelector:
        """The selector that matches no label set (a nil metav1.LabelSelector)."""
        return _NOTHING

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse selector text such as ``app=web,tier in (a,b),!canary``.

        Raises:
            SelectorParseError: the text is malformed or a key/value is invalid; the message
                names the offending token.
        """
        return _parse_label_selector(text)

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> LabelSelector:
        """A selector requiring each of ``labels`` (Go ``SelectorFromValidatedSet``)."""
        items = tuple(labels.items())
        try:
            return _selector_of_parts(items, ())
        except TypeError:  # an unhashable value: not a label, let validation say so
            return cls(Requirement.eq(k, v) for k, v in items)

    @classmethod
    def from_model(cls, selector: Any) -> LabelSelector:
        """Convert a metav1.LabelSelector (``LabelSelectorAsSelector``).

        Args:
            selector: a kcm.models LabelSelector (``.match_labels``, ``.match_expressions``
                with ``.key``/``.operator``/``.values``), its dict form (``matchLabels``,
                ``matchExpressions``), or None.

        Returns:
            ``nothing()`` for None, ``everything()`` for an empty selector, else the AND of the
            matchLabels (as ``=``) and matchExpressions (In, NotIn, Exists, DoesNotExist).

        Raises:
            SelectorParseError: an unknown operator, wrong value count, or invalid key/value.
        """
        if selector is None:
            return _NOTHING
        if isinstance(selector, Mapping):
            match_labels = selector.get("matchLabels") or {}
            exprs = tuple(
                (e.get("key", ""), e.get("operator", ""), tuple(e.get("values") or ()))
                for e in (selector.get("matchExpressions") or ())
            )
        else:
            match_labels = getattr(selector, "match_labels", None) or {}
            exprs = tuple(
                (e.key or "", e.operator or "", tuple(e.values or ()))
                for e in (getattr(selector, "match_expressions", None) or ())
            )
        if not match_labels and not exprs:
            return _EVERYTHING
        items = tuple(match_labels.items())
        try:
            return _selector_of_parts(items, exprs)
        except TypeError:  # an unhashable value: not a label, let validation say so
            return _selector_of_parts.__wrapped__(items, exprs)

    # Builder ------------------------------------------------------------------------------

    def with_requirements(self, *requirements: Requirement) -> LabelSelector:
        """This selector ANDed with more requirements (a new selector)."""
        if self._nothing:
            return self
        return LabelSelector((*self.requirements, *requirements))

    def __and__(self, other: LabelSelector) -> LabelSelector:
        if self._nothing or other._nothing:
            return _NOTHING
        return LabelSelector((*self.requirements, *other.requirements))

    @_chain
    def eq(self, key: str, value: str) -> LabelSelector:
        """AND ``key=value``."""
        return self.with_requirements(Requirement.eq(key, value))

    @_chain
    def ne(self, key: str, value: str) -> LabelSelector:
        """AND ``key!=value``."""
        return self.with_requirements(Requirement.ne(key, value))

    @_chain
    def in_(self, key: str, values: Iterable[str]) -> LabelSelector:
        """AND ``key in (values)``."""
        return self.with_requirements(Requirement.in_(key, values))

    @_chain
    def notin(self, key: str, values: Iterable[str]) -> LabelSelector:
        """AND ``key notin (values)``."""
        return self.with_requirements(Requirement.notin(key, values))

    @_chain
    def exists(self, key: str) -> LabelSelector:
        """AND ``key`` (the label is present)."""
        return self.with_requirements(Requirement.exists(key))

    @_chain
    def does_not_exist(self, key: str) -> LabelSelector:
        """AND ``!key`` (the label is absent)."""
        return self.with_requirements(Requirement.does_not_exist(key))

    @_chain
    def gt(self, key: str, value: int) -> LabelSelector:
        """AND ``key>value`` (integer comparison)."""
        return self.with_requirements(Requirement.gt(key, value))

    @_chain
    def lt(self, key: str, value: int) -> LabelSelector:
        """AND ``key<value`` (integer comparison)."""
        return self.with_requirements(Requirement.lt(key, value))

    # Behaviour ----------------------------------------------------------------------------

    @property
    def empty(self) -> bool:
        """True for a selector with no requirements (it matches everything)."""
        return not self.requirements and not self._nothing

    @property
    def is_nothing(self) -> bool:
        """True for the selector that matches nothing."""
        return self._nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with these labels is selected (None means no labels)."""
        return self._match(labels)

    def requires_exact_match(self, key: str) -> str | None:
        """The value ``key`` must equal for this selector to match, if it pins one."""
        for r in self.requirements:
            if r.key == key and (
                r.operator is Operator.EQUALS or (r.operator is Operator.IN and len(r.values) == 1)
            ):
                return r.values[0]
        return None

    def to_model_dict(self) -> dict[str, Any]:
        """The metav1.LabelSelector dict form (``=`` becomes matchLabels).

        Raises:
            ValueError: the selector uses ``!=``, ``gt`` or ``lt`` (or is ``nothing()``), which
                metav1.LabelSelector cannot express.
        """
        if self._nothing:
            raise ValueError("the 'nothing' selector has no metav1.LabelSelector form")
        match_labels: dict[str, str] = {}
        exprs: list[dict[str, Any]] = []
        names = {v: k for k, v in _MODEL_OPERATORS.items()}
        for r in self.requirements:
            if r.operator is Operator.EQUALS and r.key not in match_labels:
                match_labels[r.key] = r.values[0]
            elif r.operator in names:
                expr: dict[str, Any] = {"key": r.key, "operator": names[r.operator]}
                if r.values:
                    expr["values"] = list(r.values)
                exprs.append(expr)
            elif r.operator is Operator.EQUALS:
                exprs.append({"key": r.key, "operator": "In", "values": list(r.values)})
            else:
                raise ValueError(f"{r} has no metav1.LabelSelector form")
        out: dict[str, Any] = {}
        if match_labels:
            out["matchLabels"] = match_labels
        if exprs:
            out["matchExpressions"] = exprs
        return out

    def __iter__(self) -> Iterator[Requirement]:
        return iter(self.requirements)

    def __len__(self) -> int:
        return len(self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        if self._nothing:
            return "LabelSelector.nothing()"
        return f"LabelSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self.requirements == other.requirements and self._nothing == other._nothing

    def __hash__(self) -> int:
        return self._hash


_EVERYTHING: Final = LabelSelector()
_NOTHING: Final = LabelSelector(_nothing=True)


@functools.lru_cache(maxsize=4096)
def _selector_of_parts(
    match_labels: tuple[tuple[str, str], ...], exprs: tuple[tuple[str, str, tuple[str, ...]], ...]
) -> LabelSelector:
    """The selector of matchLabels pairs and matchExpressions triples, cached by content.

    Controllers convert the same objects' selectors on every sync (a Deployment's, each
    ReplicaSet's); validating each key and value again cost more than the sync's own work.
    Errors are not cached (``lru_cache`` keeps only returned values).
    """
    reqs = [Requirement.eq(k, v) for k, v in match_labels]
    for key, op_name, values in exprs:
        op = _MODEL_OPERATORS.get(op_name)
        if op is None:
            raise SelectorParseError(f'"{op_name}" is not a valid label selector operator')
        reqs.append(Requirement(key, op, values))
    return LabelSelector(reqs)


@functools.lru_cache(maxsize=1024)
def _parse_label_selector(text: str) -> LabelSelector:
    if not text.strip():
        return _EVERYTHING
    return LabelSelector(_Parser(text).parse())


# --------------------------------------------------------------------------------------------
# Field selectors (k8s.io/apimachinery/pkg/fields)
# --------------------------------------------------------------------------------------------


def _escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(value: str, selector: str) -> str:
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorParseError(
                    f"invalid field selector: invalid escape sequence: \\{ch}", selector=selector
                )
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorParseError(
                f"invalid field selector: unescaped character in value: {ord(ch)} "
                f"({ch!r}; escape it as '\\{ch}')",
                selector=selector,
                detail=f"invalid field selector: unescaped character in value: {ord(ch)}",
            )
        else:
            out.append(ch)
    if escaped:
        raise SelectorParseError(
            "invalid field selector: invalid escape sequence: \\", selector=selector
        )
    return "".join(out)


def _split_field_terms(text: str) -> list[str]:
    # Split on commas not preceded by an (unescaped) backslash, keeping escapes in place.
    if "," not in text:
        return [text]
    terms: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


_FIELD_OPS: Final = ("!=", "==", "=")


@final
class FieldRequirement:
    """One field selector term: ``field=value`` (``==``) or ``field!=value``."""

    __slots__ = ("field", "operator", "value")

    field: str
    operator: str
    value: str

    def __init__(self, field: str, operator: str, value: str) -> None:
        if operator == "==":
            operator = "="
        if operator not in ("=", "!="):
            raise SelectorParseError(
                f"invalid field selector operator {operator!r}: use '=', '==' or '!='"
            )
        if not field:
            raise SelectorParseError("invalid field selector: the field name is empty")
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "operator", operator)
        object.__setattr__(self, "value", value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("FieldRequirement is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (FieldRequirement, (self.field, self.operator, self.value))

    def matches(self, value: str | None) -> bool:
        """Whether a field whose value is ``value`` (None: missing, read as "") satisfies it."""
        equal = (value or "") == self.value
        return equal if self.operator == "=" else not equal

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{_escape_field_value(self.value)}"

    def __repr__(self) -> str:
        return f"FieldRequirement({self.field!r}, {self.operator!r}, {self.value!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldRequirement):
            return NotImplemented
        return (self.field, self.operator, self.value) == (other.field, other.operator, other.value)

    def __hash__(self) -> int:
        return hash((self.field, self.operator, self.value))


@final
class FieldSelector:
    """An immutable field selector: an AND of ``field=value`` / ``field!=value`` terms.

    Matching reads field values through a getter (``get(field) -> str | None``); a missing
    field reads as ``""``, as in Go. Which fields a server supports is the server's business
    (see ``kcm.apiserver``), not the parser's.
    """

    __slots__ = ("requirements",)

    requirements: tuple[FieldRequirement, ...]

    def __init__(self, requirements: Iterable[FieldRequirement] = ()) -> None:
        reqs = tuple(sorted(set(requirements), key=str))
        object.__setattr__(self, "requirements", reqs)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("FieldSelector is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (FieldSelector, (self.requirements,))

    @classmethod
    def everything(cls) -> FieldSelector:
        """The empty selector: matches everything."""
        return _FIELDS_EVERYTHING

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        """Parse ``a=b,c!=d`` (``==`` is ``=``; ``\\,``, ``\\=``, ``\\\\`` escape values).

        Raises:
            SelectorParseError: a term has no operator, or a value has an unescaped ``,``/``=``
                or a bad escape.
        """
        return _parse_field_selector(text)

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> FieldSelector:
        """A selector requiring each ``field=value`` of the mapping."""
        return cls(FieldRequirement(f, "=", v) for f, v in fields.items())

    def with_requirements(self, *requirements: FieldRequirement) -> FieldSelector:
        """This selector ANDed with more terms (a new selector)."""
        return FieldSelector((*self.requirements, *requirements))

    def __and__(self, other: FieldSelector) -> FieldSelector:
        return FieldSelector((*self.requirements, *other.requirements))

    @_chain
    def eq(self, field: str, value: str) -> FieldSelector:
        """AND ``field=value``."""
        return self.with_requirements(FieldRequirement(field, "=", value))

    @_chain
    def ne(self, field: str, value: str) -> FieldSelector:
        """AND ``field!=value``."""
        return self.with_requirements(FieldRequirement(field, "!=", value))

    @property
    def empty(self) -> bool:
        """True when there are no terms (the selector matches everything)."""
        return not self.requirements

    @property
    def fields(self) -> frozenset[str]:
        """The field names this selector reads."""
        return frozenset(r.field for r in self.requirements)

    def matches(self, get: Callable[[str], str | None]) -> bool:
        """Whether the object whose field values ``get`` returns is selected."""
        return all(r.matches(get(r.field)) for r in self.requirements)

    def matches_fields(self, fields: Mapping[str, str]) -> bool:
        """:meth:`matches` over a plain ``{field: value}`` mapping."""
        return self.matches(fields.get)

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal for this selector to match, if it pins one."""
        for r in self.requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def __iter__(self) -> Iterator[FieldRequirement]:
        return iter(self.requirements)

    def __len__(self) -> int:
        return len(self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"FieldSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)


_FIELDS_EVERYTHING: Final = FieldSelector()


@functools.lru_cache(maxsize=1024)
def _parse_field_selector(text: str) -> FieldSelector:
    reqs: list[FieldRequirement] = []
    for term in _split_field_terms(text):
        if not term:
            continue
        for i in range(len(term)):
            op = next((o for o in _FIELD_OPS if term.startswith(o, i)), None)
            if op is not None:
                field, raw = term[:i], term[i + len(op) :]
                break
        else:
            raise SelectorParseError(
                f"invalid selector: '{text}'; can't understand '{term}'", selector=text
            )
        if not field:
            raise SelectorParseError(
                f"invalid selector: '{text}'; can't understand '{term}' (no field name)",
                selector=text,
            )
        reqs.append(FieldRequirement(field, op, _unescape_field_value(raw, text)))
    return FieldSelector(reqs) if reqs else _FIELDS_EVERYTHING
