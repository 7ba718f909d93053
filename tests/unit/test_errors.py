"""kcm.errors: a Status dict becomes the most specific typed error."""

from __future__ import annotations

import re

import pytest

from kcm import errors


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"code": 404, "reason": "NotFound", "message": 'pods "x" not found'}, errors.NotFound),
        ({"code": 409, "reason": "AlreadyExists"}, errors.AlreadyExists),
        ({"code": 409, "reason": "Conflict"}, errors.Conflict),
        (
            {"code": 410, "reason": "Expired", "message": "too old resource version"},
            errors.ResourceExpired,
        ),
        ({"code": 410, "reason": "Gone"}, errors.ResourceExpired),
        ({"code": 422, "reason": "Invalid"}, errors.Invalid),
        ({"code": 400}, errors.BadRequest),
        ({"code": 401}, errors.Unauthorized),
        ({"code": 403, "reason": "Forbidden"}, errors.Forbidden),
        ({"code": 405}, errors.MethodNotAllowed),
        ({"code": 500, "reason": "InternalError"}, errors.InternalError),
        ({"code": 503}, errors.ServiceUnavailable),
        ({"code": 504, "reason": "Timeout"}, errors.ServerTimeout),
        ({"code": 418, "reason": "Teapot"}, errors.ApiError),
    ],
)
def test_status_maps_to_specific_error(status: dict[str, object], expected: type) -> None:
    err = errors.api_error_from_status(status)
    assert type(err) is expected
    assert err.code == status["code"]


def test_invalid_keeps_causes_and_names_fields_in_str() -> None:
    err = errors.api_error_from_status(
        {
            "code": 422,
            "reason": "Invalid",
            "message": 'Pod "Bad" is invalid',
            "details": {
                "causes": [
                    {"reason": "FieldValueInvalid", "message": "bad", "field": "metadata.name"}
                ]
            },
        }
    )
    assert err.causes == [
        errors.StatusCause(reason="FieldValueInvalid", message="bad", field="metadata.name")
    ]
    assert "metadata.name: bad" in str(err)


def test_too_many_requests_takes_retry_after_from_header_or_details() -> None:
    from_header = errors.api_error_from_status({"code": 429}, retry_after=3.0)
    from_details = errors.api_error_from_status({"code": 429, "details": {"retryAfterSeconds": 7}})
    assert isinstance(from_header, errors.TooManyRequests)
    assert from_header.retry_after == 3.0
    assert isinstance(from_details, errors.TooManyRequests)
    assert from_details.retry_after == 7.0
    assert from_header.retryable


def test_resource_version_too_large_is_a_retryable_server_timeout() -> None:
    err = errors.api_error_from_status(
        {
            "code": 504,
            "reason": "Timeout",
            "details": {"causes": [{"reason": "ResourceVersionTooLarge"}]},
        }
    )
    assert isinstance(err, errors.ResourceVersionTooLarge)
    assert isinstance(err, errors.ServerTimeout)
    assert err.retryable


def test_config_error_names_file_context_and_field() -> None:
    err = errors.ConfigError(
        "no such context; run kubectl config get-contexts", path="/k", context="dev"
    )
    assert str(err) == "no such context; run kubectl config get-contexts (file '/k', context 'dev')"


def test_watch_decode_error_truncates_the_line() -> None:
    err = errors.WatchDecodeError("bad line", line=b"x" * 5000)
    assert len(err.line) == 1024
    assert isinstance(err, errors.DecodeError)


def test_cache_sync_timeout_error_is_a_kcm_error_and_a_timeout_error() -> None:
    err = errors.CacheSyncTimeoutError(
        "caches of Pod did not sync", controller="rs", kinds=("Pod",), timeout=5.0
    )
    assert isinstance(err, errors.KcmError)
    assert isinstance(err, TimeoutError)
    assert not err.retryable
    assert (err.controller, err.kinds, err.timeout) == ("rs", ("Pod",), 5.0)
    assert str(err) == "caches of Pod did not sync"


def _tree() -> dict[str, str | None]:
    """The class tree drawn in kcm.errors' docstring, as ``{name: parent name}``."""
    assert errors.__doc__ is not None
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in errors.__doc__.splitlines():
        match = re.match(r"^(\s*(?:[│ ]   )*(?:[├└]── )?)([A-Z]\w+)\b", line)
        if match is None or not line.startswith("    "):
            continue
        depth = len(match.group(1))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[match.group(2)] = stack[-1][1] if stack else None
        stack.append((depth, match.group(2)))
    return parents


def test_the_docstring_tree_matches_the_classes() -> None:
    tree = _tree()
    exported = {
        name
        for name in errors.__all__
        if isinstance(getattr(errors, name), type)
        and issubclass(getattr(errors, name), BaseException)
    }
    assert set(tree) == exported
    assert tree["KcmError"] is None
    for name, parent in tree.items():
        if parent is not None:
            cls = getattr(errors, name)
            assert cls.__bases__[0] is getattr(errors, parent), name


def test_graceful_shutdown_timeout_is_a_kcm_error_and_a_timeout_error() -> None:
    err = errors.GracefulShutdownTimeout(
        "manager: shutdown took too long",
        timeout=30.0,
        runnables=("controller web",),
        stages=("leader", "caches"),
    )
    assert isinstance(err, errors.KcmError)
    assert isinstance(err, TimeoutError)
    assert not err.retryable
    assert (err.timeout, err.runnables, err.stages) == (
        30.0,
        ("controller web",),
        ("leader", "caches"),
    )
    assert str(err) == "manager: shutdown took too long"
    assert "GracefulShutdownTimeout" in errors.__all__
