"""Query parameters and request options as kube-apiserver decodes and validates them (1.24's
parameter codec, ``ValidateListOptions``/``ValidateDeleteOptions``/``Validate*Options``, the
etcd3 store's continue tokens), unit by unit; the differential scenarios replay a few of each
against a real server."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from kcm.apiserver._continue import decode_continue, encode_continue
from kcm.apiserver._discovery import storage_version_hash
from kcm.apiserver._list import cache_read, list_source
from kcm.apiserver._options import (
    ListOptions,
    delete_options,
    go_bool,
    go_int,
    validate_write_options,
)
from kcm.apiserver._registry import Registry
from kcm.apiserver._routing import Target, allowed_methods
from kcm.apiserver._status import StatusError
from kcm.apiserver._store import Store
from kcm.apiserver._subresources import describe


def status_of(call: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    with pytest.raises(StatusError) as info:
        call(*args, **kwargs)
    return info.value.to_status()


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (None, False),
        ([], False),
        (["0"], False),
        (["false"], False),
        (["FALSE"], False),
        (["False"], False),
        ([""], True),
        (["1"], True),
        (["true"], True),
        (["True"], True),
        (["yes"], True),
        (["no"], True),
        (["0", "false"], False),
    ],
)
def test_booleans_are_false_only_when_absent_zero_or_false(
    values: list[str] | None, expected: bool
) -> None:
    assert go_bool(values) is expected


def test_integers_parse_as_strconv_parseint() -> None:
    assert go_int("42") == 42
    assert go_int("-1") == -1
    assert go_int("+7") == 7
    for text, why in [
        ("two", "invalid syntax"),
        ("", "invalid syntax"),
        ("0.5", "invalid syntax"),
        (" 1", "invalid syntax"),
        ("9223372036854775808", "value out of range"),
    ]:
        status = status_of(go_int, text)
        assert status["code"] == 400
        assert status["reason"] == "BadRequest"
        assert status["message"] == f'strconv.ParseInt: parsing "{text}": {why}'
        assert "details" not in status


def test_list_options_decode() -> None:
    options = ListOptions.parse(
        {
            "watch": ["yes"],
            "allowWatchBookmarks": [""],
            "timeoutSeconds": ["30"],
            "limit": ["5"],
            "labelSelector": ["app in (a,b)"],
            "fieldSelector": ["metadata.name=x"],
            "resourceVersion": ["7"],
        }
    )
    assert options.watch
    assert options.allow_watch_bookmarks
    assert (options.timeout_seconds, options.limit, options.resource_version) == (30, 5, "7")
    assert not ListOptions.parse({"watch": ["False"]}).watch
    assert ListOptions.parse({}, watch=True).watch  # a /watch/ path


def test_numbers_are_converted_before_selectors_are_parsed() -> None:
    status = status_of(ListOptions.parse, {"labelSelector": ["a in (b"], "limit": ["x"]})
    assert status["message"] == 'strconv.ParseInt: parsing "x": invalid syntax'


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("app in (web", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("app=web,", "found '', expected: identifier after ','"),
        (
            "x>a",
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' "
            "operators, the value must be an integer",
        ),
        (
            "a/b/c=d",
            'unable to parse requirement: key: Invalid value: "a/b/c": a qualified name must '
            "consist of alphanumeric characters",
        ),
        (
            "app in (-a,-b)",
            'unable to parse requirement: [values[0][app]: Invalid value: "-a": a valid label '
            "must be",
        ),
    ],
)
def test_label_selector_errors_are_gos(selector: str, message: str) -> None:
    status = status_of(ListOptions.parse, {"labelSelector": [selector]})
    assert (status["code"], status["reason"]) == (400, "BadRequest")
    assert status["message"].startswith(message)


def test_field_selector_errors_are_gos() -> None:
    status = status_of(ListOptions.parse, {"fieldSelector": ["metadata.name"]})
    assert (
        status["message"] == "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
    )


def _causes(status: dict[str, Any]) -> list[str]:
    return [c["message"] for c in status["details"]["causes"]]


def test_resource_version_match_rules() -> None:
    def invalid(**query: str) -> dict[str, Any]:
        status = status_of(ListOptions.parse, {k: [v] for k, v in query.items()})
        assert status["code"] == 422
        assert status["details"]["kind"] == "ListOptions"
        assert status["details"]["group"] == "meta.k8s.io"
        assert status["message"].startswith('ListOptions.meta.k8s.io "" is invalid: ')
        return status

    assert _causes(invalid(resourceVersionMatch="NotOlderThan")) == [
        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    ]
    assert _causes(invalid(resourceVersionMatch="Newest", resourceVersion="0")) == [
        'Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'
    ]
    assert _causes(invalid(resourceVersionMatch="Exact", resourceVersion="0")) == [
        'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
    ]
    assert _causes(invalid(resourceVersionMatch="Exact", resourceVersion="5", **{"continue": "x"}))
    both = invalid(watch="1", resourceVersionMatch="NotOlderThan")
    assert _causes(both) == [
        "Forbidden: resourceVersionMatch is forbidden for watch",
        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
    ]
    assert both["message"].endswith("resourceVersion is provided]")
    # a watch list (sendInitialEvents, 1.27+) needs NotOlderThan, with or without an RV
    watch_list = {"watch": ["1"], "sendInitialEvents": ["true"]}
    ListOptions.parse({**watch_list, "resourceVersionMatch": ["NotOlderThan"]})
    assert _causes(status_of(ListOptions.parse, watch_list)) == [
        "Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set "
        "to NotOlderThan"
    ]


def test_delete_options_come_from_the_body_or_the_query() -> None:
    assert delete_options(None, {"gracePeriodSeconds": ["0"], "dryRun": ["All"]}) == {
        "gracePeriodSeconds": 0,
        "dryRun": ["All"],
    }
    assert delete_options(None, {"orphanDependents": ["false"]}) == {"orphanDependents": False}
    # a body wins whole: the query is not read at all
    body = {"kind": "DeleteOptions", "propagationPolicy": "Orphan"}
    assert delete_options(body, {"propagationPolicy": ["Sideways"]}) == body
    assert status_of(delete_options, None, {"gracePeriodSeconds": ["soon"]})["code"] == 400


def test_delete_options_validation() -> None:
    status = status_of(delete_options, {"propagationPolicy": "Sideways"}, {})
    assert status["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
        '"Sideways": supported values: "Foreground", "Background", "Orphan", "nil"'
    )
    both = {"orphanDependents": True, "propagationPolicy": "Background"}
    assert _causes(status_of(delete_options, both, {})) == [
        'Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set'
    ]
    assert _causes(status_of(delete_options, None, {"dryRun": ["All", "Some"]})) == [
        'Unsupported value: []string{"All", "Some"}: supported values: "All"'
    ]


def test_write_options_validation() -> None:
    validate_write_options({"dryRun": ["All"], "fieldValidation": ["Strict"]}, "CreateOptions")
    status = status_of(validate_write_options, {"fieldManager": ["m" * 129]}, "UpdateOptions")
    assert status["message"] == (
        'UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: must have at most '
        "128 bytes"
    )
    assert _causes(status_of(validate_write_options, {"fieldManager": ["a\x07"]}, "CreateOptions"))[
        0
    ] == ('Invalid value: "a\\a": invalid character U+0007 (at position 1)')
    assert _causes(
        status_of(validate_write_options, {"fieldValidation": ["Bogus"]}, "CreateOptions")
    ) == ['Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"']
    merge = "application/merge-patch+json"
    apply = "application/apply-patch+yaml"
    status = status_of(
        validate_write_options, {"force": ["false"]}, "PatchOptions", patch_type=merge
    )
    assert _causes(status) == ["Forbidden: may not be specified for non-apply patch"]
    status = status_of(validate_write_options, {}, "PatchOptions", patch_type=apply)
    assert status["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for '
        "apply patch"
    )
    validate_write_options(
        {"force": ["1"], "fieldManager": ["m"]}, "PatchOptions", patch_type=apply
    )


def test_continue_tokens_round_trip_in_kubes_format() -> None:
    token = encode_continue(12, ("ns", "b"), across_namespaces=False)
    assert "=" not in token
    raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    assert raw == {"v": "meta.k8s.io/v1", "rv": 12, "start": "b\x00"}
    assert decode_continue(token, "ns") == (12, ("ns", "b"))
    across = encode_continue(12, ("ns", "b"), across_namespaces=True)
    assert decode_continue(across, None) == (12, ("ns", "b"))


def _token(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("token", "why"),
    [
        ("not-a-token", "invalid character '\\u009e' looking for beginning of value"),
        ("a=b", "illegal base64 data at input byte 1"),
        ("abcde", "illegal base64 data at input byte 4"),
        (
            _token({"v": "x", "rv": 1, "start": "a"}),
            'server does not recognize this encoded version "x"',
        ),
        (
            _token({"v": "meta.k8s.io/v1", "rv": 0, "start": "a"}),
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ),
        (
            _token({"v": "meta.k8s.io/v1", "rv": 1, "start": ""}),
            "encoded start key empty (version meta.k8s.io/v1)",
        ),
        (_token({"v": "meta.k8s.io/v1", "rv": 1, "start": "../x"}), "../x"),
    ],
)
def test_bad_continue_tokens(token: str, why: str) -> None:
    status = status_of(decode_continue, token, "ns")
    assert (status["code"], status["reason"]) == (400, "BadRequest")
    assert status["message"] == f"invalid continue token: continue key is not valid: {why}"


def _store_with(count: int) -> tuple[Store, Any]:
    registry = Registry()
    res = registry.lookup("", "v1", "configmaps")
    store = Store()
    for i in range(count):
        meta = {"name": f"c{i}", "namespace": "ns"}
        store.create(res.storage_key, {"metadata": meta})
    return store, res


def test_which_lists_the_watch_cache_serves() -> None:
    store, res = _store_with(3)

    def source(**query: str) -> Any:
        return list_source(store, res, "ns", ListOptions.parse({k: [v] for k, v in query.items()}))

    # from the cache: resourceVersion 0, or N without limit; whole (the cache cannot page)
    assert source(resourceVersion="0", limit="1").limit == 0
    assert source(resourceVersion="2").rv == 3
    status = status_of(source, resourceVersion="abc")
    assert (status["code"], status.get("reason")) == (500, None)
    assert status["message"] == (
        'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
    )
    with pytest.raises(StatusError) as info:
        source(resourceVersion="9")
    too_large = info.value
    assert too_large.code == 504
    assert too_large.headers == {"Retry-After": "1"}
    assert too_large.to_status()["message"] == "Timeout: Too large resource version: 9, current: 3"
    # from etcd: no resourceVersion (latest), Exact, or N with a limit (the state at N)
    assert source(limit="1").limit == 1
    assert source(resourceVersion="2", limit="1").rv == 2
    assert len(source(resourceVersion="1", resourceVersionMatch="Exact").objects) == 1
    status = status_of(source, resourceVersion="9", resourceVersionMatch="Exact")
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "etcdserver: mvcc: required revision is a future revision",
        "code": 500,
    }
    assert status_of(source, resourceVersion="abc", limit="1")["code"] == 400
    token = encode_continue(2, ("ns", "c0"), across_namespaces=False)
    assert source(**{"continue": token}).start == ("ns", "c0")
    assert status_of(source, resourceVersion="3", **{"continue": token})["message"] == (
        "specifying resource version is not allowed when using continue"
    )


def test_a_get_with_a_resource_version_reads_the_cache() -> None:
    store, _ = _store_with(1)
    cache_read(store, "")
    cache_read(store, "0")
    cache_read(store, "1")
    with pytest.raises(StatusError) as info:
        cache_read(store, "2")
    assert info.value.code == 504
    assert status_of(cache_read, store, "-1")["code"] == 500


def test_storage_version_hash_is_kubes() -> None:
    assert storage_version_hash("", "v1", "Pod") == "xPOwRZ+Yhw8="
    assert storage_version_hash("apps", "v1", "Deployment") == "8aSe+NMegvE="


def test_subresources_kinds_and_verbs() -> None:
    registry = Registry()
    pods = registry.lookup("", "v1", "pods")
    sas = registry.lookup("", "v1", "serviceaccounts")
    assert pods is not None
    assert sas is not None
    assert describe(pods, "exec").kind == "PodExecOptions"
    assert describe(pods, "exec").verbs == ("create", "get")
    assert describe(pods, "log").verbs == ("get",)
    assert describe(pods, "proxy").kind == "PodProxyOptions"
    token = describe(sas, "token")
    assert (token.group, token.version, token.kind, token.verbs) == (
        "authentication.k8s.io",
        "v1",
        "TokenRequest",
        ("create",),
    )


def test_which_methods_a_path_takes() -> None:
    registry = Registry()

    def methods(plural: str, ns: str | None, name: str | None, sub: str = "") -> set[str]:
        res = registry.lookup("", "v1", plural)
        assert res is not None
        return set(allowed_methods(Target(res, ns, name, sub)))

    assert methods("configmaps", "ns", None) == {"GET", "POST", "DELETE"}
    assert methods("configmaps", None, None) == {"GET"}  # across namespaces: list only
    assert methods("configmaps", "ns", "a") == {"GET", "PUT", "PATCH", "DELETE"}
    assert methods("namespaces", "", None) == {"GET", "POST"}  # no deletecollection
    assert methods("componentstatuses", "", "etcd-0") == {"GET"}
    assert methods("bindings", "ns", None) == {"POST"}
    assert methods("bindings", "ns", "b") == set()  # no such path: 404
    assert methods("pods", "ns", "p", "binding") == {"POST"}
    assert methods("pods", "ns", "p", "status") == {"GET", "PUT", "PATCH"}
    assert methods("serviceaccounts", "ns", "sa", "token") == {"POST"}
