"""Label and field selectors: parsing, printing, matching and the builders (apimachinery tests)."""

from __future__ import annotations

import copy
import pickle
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcm.selectors import (
    FieldRequirement,
    FieldSelector,
    LabelSelector,
    Operator,
    Requirement,
    SelectorParseError,
    label_key_errors,
    label_value_errors,
)

# --- label selector parsing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("   ", ""),
        ("x=a", "x=a"),
        ("x==a", "x=a"),
        ("x!=a", "x!=a"),
        ("x=a,y!=b", "x=a,y!=b"),
        ("y!=b,x=a", "x=a,y!=b"),
        ("x=", "x="),
        ("x= ", "x="),
        ("x=,z= ", "x=,z="),
        ("x in (a)", "x in (a)"),
        ("x in (b,a)", "x in (a,b)"),
        ("x in (a,a,b)", "x in (a,b)"),
        ("x notin (a)", "x notin (a)"),
        ("x in (,a)", "x in (,a)"),
        ("x in (a,)", "x in (,a)"),
        ("x in ()", "x in ()"),
        ("x", "x"),
        ("!x", "!x"),
        ("! x", "!x"),
        ("x>1", "x>1"),
        ("x<-1", "x<-1"),
        ("w in (a),x,!y,z notin (c)", "w in (a),x,!y,z notin (c)"),
        ("  x  =  a  ,  y  ", "x=a,y"),
        ("example.com/app=web", "example.com/app=web"),
        ("in=notin", "in=notin"),
        ("a in (in,notin)", "a in (in,notin)"),
        ("x=a_b-c.d", "x=a_b-c.d"),
    ],
)
def test_parse_and_print(text: str, canonical: str) -> None:
    sel = LabelSelector.parse(text)
    assert str(sel) == canonical
    assert LabelSelector.parse(str(sel)) == sel


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("x in b", "found 'b', expected: '('"),
        ("x=a=b", "found '=', expected: ',' or 'end of string'"),
        ("!", "found '', expected: identifier"),
        ("x,", "found '', expected: identifier after ','"),
        ("x,,y", "found ',', expected: identifier after ','"),
        (",x", "found ',', expected: !, identifier, or 'end of string'"),
        ("x in (a b)", "found 'b', expected: ',' or ')'"),
        ("x (a)", "found '(', expected: in, notin, =, ==, !=, gt, lt"),
        ("x=(a)", "found '(', expected: identifier"),
        ("x in (a", "found '', expected: ',' or ')'"),
        ("x>a", "must be an integer"),
        ("x>", "must be an integer"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        ("x=a b", "found 'b', expected: ',' or 'end of string'"),
        ("a/b/c=d", "invalid label key 'a/b/c'"),
        ("/a=b", "prefix part must be non-empty"),
        ("Foo.com/a=b", "prefix part a lowercase RFC 1123 subdomain"),
        ("-a=b", "name part must consist of alphanumeric characters"),
        ("a=-b", "invalid label value '-b'"),
        ("a=" + "v" * 64, "must be no more than 63 characters"),
        ("k" * 64 + "=v", "name part must be no more than 63 characters"),
        ("x in (-a)", "invalid label value '-a'"),
    ],
)
def test_parse_errors(text: str, fragment: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        LabelSelector.parse(text)
    assert fragment in str(info.value)
    assert info.value.selector == text
    assert isinstance(info.value, ValueError)


# --- matching ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", {}, True),
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y", {"x": "z"}, False),
        ("x=y", {}, False),
        ("x==y", {"x": "y"}, True),
        ("x!=y", {"x": "y"}, False),
        ("x!=y", {"x": "z"}, True),
        ("x!=y", {}, True),  # a missing label satisfies !=
        ("x=", {"x": ""}, True),
        ("x=", {}, False),
        ("x in (a,b)", {"x": "b"}, True),
        ("x in (a,b)", {"x": "c"}, False),
        ("x in (a,b)", {}, False),
        ("x notin (a,b)", {"x": "c"}, True),
        ("x notin (a,b)", {"x": "a"}, False),
        ("x notin (a,b)", {}, True),  # a missing label satisfies notin
        ("x", {"x": ""}, True),
        ("x", {"y": "x"}, False),
        ("!x", {"y": "1"}, True),
        ("!x", {"x": ""}, False),
        ("x>1", {"x": "2"}, True),
        ("x>1", {"x": "1"}, False),
        ("x>1", {"x": "a"}, False),
        ("x>1", {}, False),
        ("x<1", {"x": "-5"}, True),
        ("x<1", {"x": "1"}, False),
        ("x=a,y=b", {"x": "a", "y": "b", "z": "c"}, True),
        ("x=a,y=b", {"x": "a"}, False),
        ("x=a,!z", {"x": "a", "z": "c"}, False),
    ],
)
def test_matches(text: str, labels: dict[str, str], expected: bool) -> None:
    sel = LabelSelector.parse(text)
    assert sel.matches(labels) is expected
    # the compiled matcher agrees with the per-requirement reference semantics
    assert all(r.matches(labels) for r in sel.requirements) is expected


def test_matches_none_labels_as_empty() -> None:
    assert LabelSelector.parse("x!=a").matches(None)
    assert not LabelSelector.parse("x").matches(None)
    assert LabelSelector.everything().matches(None)


def test_everything_and_nothing() -> None:
    every, nothing = LabelSelector.everything(), LabelSelector.nothing()
    assert every.empty
    assert not every.is_nothing
    assert not nothing.empty
    assert nothing.is_nothing
    assert every.matches({"a": "b"})
    assert not nothing.matches({})
    assert not nothing.matches({"a": "b"})
    assert every != nothing
    assert str(every) == ""
    assert str(nothing) == ""
    assert nothing.eq("a", "b") is nothing
    assert (every & nothing).is_nothing
    assert LabelSelector.parse("") == every


# --- builders and models ---------------------------------------------------------------------


def test_chained_builder_from_class_and_instance() -> None:
    sel = LabelSelector.eq("app", "web").in_("tier", ["b", "a"]).exists("x")
    assert str(sel) == "app=web,tier in (a,b),x"
    assert sel == LabelSelector.parse("x,tier in (a,b),app=web")
    more = (
        sel.ne("env", "prod").notin("zone", ["z1"]).does_not_exist("canary").gt("n", 3).lt("m", 9)
    )
    assert str(more) == "app=web,!canary,env!=prod,m<9,n>3,tier in (a,b),x,zone notin (z1)"
    assert LabelSelector.parse(str(more)) == more
    assert sel.requirements[0] == Requirement.eq("app", "web")


def test_requirement_constructor_validation() -> None:
    assert Requirement("a", "In", ["x"]).operator is Operator.IN
    assert Requirement("a", "==", ["x"]).operator is Operator.EQUALS
    with pytest.raises(SelectorParseError, match="values set can't be empty"):
        Requirement.in_("a", [])
    with pytest.raises(SelectorParseError, match="values set must be empty"):
        Requirement("a", Operator.EXISTS, ["x"])
    with pytest.raises(SelectorParseError, match="one single value"):
        Requirement("a", Operator.EQUALS, ["x", "y"])
    with pytest.raises(SelectorParseError, match="not a valid label selector operator"):
        Requirement("a", "Bogus", ["x"])
    with pytest.raises(SelectorParseError, match="invalid label key"):
        Requirement.exists("bad key")
    with pytest.raises(AttributeError):
        Requirement.exists("a").key = "b"


def test_from_model_dict_and_struct() -> None:
    assert LabelSelector.from_model(None).is_nothing
    assert LabelSelector.from_model({}).empty
    assert LabelSelector.from_model({"matchLabels": {}, "matchExpressions": []}).empty
    sel = LabelSelector.from_model(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "x", "operator": "Exists"},
                {"key": "y", "operator": "DoesNotExist"},
            ],
        }
    )
    assert str(sel) == "app=web,env notin (prod),tier in (a,b),x,!y"
    struct = SimpleNamespace(
        match_labels={"app": "web"},
        match_expressions=[SimpleNamespace(key="tier", operator="In", values=["a"])],
    )
    assert str(LabelSelector.from_model(struct)) == "app=web,tier in (a)"
    assert LabelSelector.from_model(
        SimpleNamespace(match_labels=None, match_expressions=None)
    ).empty
    with pytest.raises(SelectorParseError, match='"Gt" is not a valid label selector operator'):
        LabelSelector.from_model({"matchExpressions": [{"key": "a", "operator": "Gt"}]})
    with pytest.raises(SelectorParseError, match="values set can't be empty"):
        LabelSelector.from_model({"matchExpressions": [{"key": "a", "operator": "In"}]})


def test_to_model_dict_round_trip() -> None:
    model: dict[str, Any] = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]},
            {"key": "x", "operator": "Exists"},
        ],
    }
    sel = LabelSelector.from_model(model)
    assert sel.to_model_dict() == model
    assert LabelSelector.from_model(sel.to_model_dict()) == sel
    with pytest.raises(ValueError, match=r"no metav1\.LabelSelector form"):
        LabelSelector.parse("a!=b").to_model_dict()


def test_from_labels_and_exact_match() -> None:
    sel = LabelSelector.from_labels({"b": "2", "a": "1"})
    assert str(sel) == "a=1,b=2"
    assert sel.requires_exact_match("a") == "1"
    assert sel.requires_exact_match("c") is None
    assert LabelSelector.parse("a in (x)").requires_exact_match("a") == "x"
    assert LabelSelector.parse("a in (x,y)").requires_exact_match("a") is None


def test_equality_hash_and_immutability() -> None:
    a = LabelSelector.parse("x=1,y in (b,a)")
    b = LabelSelector.parse("y in (a,b),x==1")
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    assert a != LabelSelector.parse("x=1")
    with pytest.raises(AttributeError):
        a.requirements = ()
    assert list(a) == list(a.requirements)
    assert len(a) == 2
    assert repr(a) == "LabelSelector.parse('x=1,y in (a,b)')"


# --- label key/value validation ------------------------------------------------------------


def test_label_key_and_value_messages() -> None:
    assert label_key_errors("app") == []
    assert label_key_errors("example.com/app") == []
    assert label_key_errors("a/b/c") == [
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    ]
    assert label_key_errors("x/") == ["name part must be non-empty"]
    assert label_value_errors("") == []
    assert label_value_errors("ok.Value_1") == []
    assert label_value_errors("-x") == [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]


# --- property tests ------------------------------------------------------------------------

_ALNUM = "abcxyz019"
_names = st.one_of(
    st.sampled_from(_ALNUM),
    st.builds(
        lambda a, mid, b: a + mid + b,
        st.sampled_from(_ALNUM),
        st.text(alphabet="ab9-_.", max_size=6),
        st.sampled_from(_ALNUM),
    ),
)
_keys = st.one_of(
    _names, st.builds(lambda p, n: f"{p}.io/{n}", st.sampled_from(["ex", "k8s"]), _names)
)
_values = st.one_of(st.just(""), _names)


@st.composite
def _requirements(draw: st.DrawFn) -> Requirement:
    key = draw(_keys)
    op = draw(st.sampled_from(list(Operator)))
    if op in (Operator.IN, Operator.NOT_IN):
        return Requirement(key, op, draw(st.lists(_values, min_size=1, max_size=3)))
    if op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        return Requirement(key, op)
    if op in (Operator.GREATER_THAN, Operator.LESS_THAN):
        return Requirement(key, op, [str(draw(st.integers(-100, 100)))])
    return Requirement(key, op, [draw(_values)])


_selectors = st.builds(LabelSelector, st.lists(_requirements(), max_size=5))
_labels = st.dictionaries(_keys, st.one_of(_values, st.integers(-100, 100).map(str)), max_size=5)


@settings(max_examples=300)
@given(_selectors)
def test_str_parse_round_trip(sel: LabelSelector) -> None:
    text = str(sel)
    again = LabelSelector.parse(text)
    assert again == sel
    assert str(again) == text


@settings(max_examples=300)
@given(_selectors, _labels)
def test_compiled_matcher_equals_reference(sel: LabelSelector, labels: dict[str, str]) -> None:
    assert sel.matches(labels) == all(r.matches(labels) for r in sel.requirements)


@given(st.text(max_size=20))
def test_parse_never_crashes_unexpectedly(text: str) -> None:
    try:
        sel = LabelSelector.parse(text)
    except SelectorParseError:
        return
    assert LabelSelector.parse(str(sel)) == sel


# --- field selectors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical", "reqs"),
    [
        ("", "", []),
        ("a=b", "a=b", [("a", "=", "b")]),
        ("a==b", "a=b", [("a", "=", "b")]),
        ("a!=b", "a!=b", [("a", "!=", "b")]),
        ("b=1,a=2", "a=2,b=1", [("a", "=", "2"), ("b", "=", "1")]),
        ("a=", "a=", [("a", "=", "")]),
        (r"a=x\,y", r"a=x\,y", [("a", "=", "x,y")]),
        (r"a=x\=y", r"a=x\=y", [("a", "=", "x=y")]),
        (r"a=x\\y", r"a=x\\y", [("a", "=", "x\\y")]),
        (r"a=x\\,b=y", r"a=x\\,b=y", [("a", "=", "x\\"), ("b", "=", "y")]),
        ("a=b,,c=d", "a=b,c=d", [("a", "=", "b"), ("c", "=", "d")]),
        ("spec.nodeName!=", "spec.nodeName!=", [("spec.nodeName", "!=", "")]),
    ],
)
def test_field_parse(text: str, canonical: str, reqs: list[tuple[str, str, str]]) -> None:
    sel = FieldSelector.parse(text)
    assert str(sel) == canonical
    assert [(r.field, r.operator, r.value) for r in sel.requirements] == reqs
    assert FieldSelector.parse(str(sel)) == sel


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a", "invalid selector: 'a'; can't understand 'a'"),
        ("a=b,c", "can't understand 'c'"),
        ("a=b=c", "unescaped character in value: 61"),
        (r"a=b\x", r"invalid escape sequence: \x"),
        ("a=b\\", "invalid escape sequence"),
        ("=b", "no field name"),
    ],
)
def test_field_parse_errors(text: str, fragment: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        FieldSelector.parse(text)
    assert fragment in str(info.value)


def test_field_matching() -> None:
    obj = {"metadata.name": "a", "spec.nodeName": "", "status.phase": "Running"}
    assert FieldSelector.parse("").matches(obj.get)
    assert FieldSelector.parse("metadata.name=a").matches(obj.get)
    assert not FieldSelector.parse("metadata.name=b").matches(obj.get)
    assert FieldSelector.parse("spec.nodeName=").matches(obj.get)
    assert FieldSelector.parse("missing=").matches(obj.get)  # missing reads as ""
    assert not FieldSelector.parse("missing!=").matches(obj.get)
    assert FieldSelector.parse("status.phase!=Pending,metadata.name=a").matches_fields(obj)
    assert not FieldSelector.parse("status.phase!=Running,metadata.name=a").matches(obj.get)


def test_field_builder_and_helpers() -> None:
    sel = FieldSelector.eq("spec.nodeName", "n,1").ne("status.phase", "Failed")
    assert str(sel) == r"spec.nodeName=n\,1,status.phase!=Failed"
    assert FieldSelector.parse(str(sel)) == sel
    assert sel.requires_exact_match("spec.nodeName") == "n,1"
    assert sel.requires_exact_match("status.phase") is None
    assert sel.fields == frozenset({"spec.nodeName", "status.phase"})
    assert FieldSelector.from_fields({"a": "1"}) == FieldSelector.parse("a==1")
    assert FieldSelector.everything().empty
    assert not sel.empty
    assert (FieldSelector.eq("a", "1") & FieldSelector.eq("b", "2")) == FieldSelector.parse(
        "a=1,b=2"
    )
    with pytest.raises(SelectorParseError):
        FieldRequirement("a", "in", "x")
    assert list(sel) == list(sel.requirements)
    assert len(sel) == 2


_field_values = st.text(alphabet="ab,=\\ .-", max_size=8)


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b.c", "d"]), st.sampled_from(["=", "!="]), _field_values),
        max_size=4,
    )
)
def test_field_round_trip(terms: list[tuple[str, str, str]]) -> None:
    sel = FieldSelector(FieldRequirement(f, op, v) for f, op, v in terms)
    assert FieldSelector.parse(str(sel)) == sel


def test_from_kcm_models_struct() -> None:
    meta_v1 = pytest.importorskip("kcm.models.meta_v1")
    sel = meta_v1.LabelSelector(
        match_labels={"app": "web"},
        match_expressions=[
            meta_v1.LabelSelectorRequirement(key="tier", operator="NotIn", values=["db"]),
            meta_v1.LabelSelectorRequirement(key="x", operator="Exists"),
        ],
    )
    parsed = LabelSelector.from_model(sel)
    assert str(parsed) == "app=web,tier notin (db),x"
    assert parsed.matches({"app": "web", "x": ""})
    assert LabelSelector.from_model(meta_v1.LabelSelector()).empty
    with pytest.raises(SelectorParseError):
        LabelSelector.from_model(
            meta_v1.LabelSelector(match_expressions=[meta_v1.LabelSelectorRequirement()])
        )


def test_copy_and_pickle_round_trip() -> None:
    for sel in (
        LabelSelector.parse("a=b,c in (d,e),!f,g>3"),
        LabelSelector.everything(),
        LabelSelector.nothing(),
    ):
        assert copy.deepcopy(sel) == sel
        again = pickle.loads(pickle.dumps(sel))
        assert again == sel
        assert again.matches({"a": "b", "c": "d", "g": "4"}) == sel.matches(
            {"a": "b", "c": "d", "g": "4"}
        )
    fsel = FieldSelector.parse(r"a=b\,c,d!=e")
    assert copy.deepcopy(fsel) == fsel
    assert pickle.loads(pickle.dumps(fsel)) == fsel


def test_error_detail_is_gos_bare_text() -> None:
    with pytest.raises(SelectorParseError) as info:
        LabelSelector.parse("app=web,")
    assert info.value.detail == "found '', expected: identifier after ','"
    assert "app=web," in str(info.value)
    with pytest.raises(SelectorParseError) as info:
        FieldSelector.parse("a=b=c")
    assert info.value.detail == "invalid field selector: unescaped character in value: 61"


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("x in (a,", "unable to parse requirement: found '', expected: ',', or identifier"),
        (
            "x>a",
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' "
            "operators, the value must be an integer",
        ),
        (
            "k=-v",
            'unable to parse requirement: values[0][k]: Invalid value: "-v": a valid label '
            "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
            "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
            "[A-Za-z0-9])?')",
        ),
        (
            "-k=v",
            'unable to parse requirement: key: Invalid value: "-k": name part must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        ("k in (-a,-b)", 'unable to parse requirement: [values[0][k]: Invalid value: "-a"'),
    ],
)
def test_requirement_errors_carry_gos_text(text: str, detail: str) -> None:
    """What ``labels.Parse`` says (kube-apiserver's 400): a requirement's errors are wrapped in
    "unable to parse requirement", its validation errors are a ``field.ErrorList``."""
    with pytest.raises(SelectorParseError) as info:
        LabelSelector.parse(text)
    assert info.value.detail.startswith(detail)
