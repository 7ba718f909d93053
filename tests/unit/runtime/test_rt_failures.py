"""Which failures are expected (one log line) and how they read: the rule the runtime's
controllers and controllerkit's timer-driven passes share."""

from __future__ import annotations

from kcm.errors import Conflict, TransportError
from kcm.runtime import TerminalError, error_line, is_expected_failure


def test_api_errors_unreachable_servers_and_give_ups_are_expected() -> None:
    assert is_expected_failure(Conflict("stale"))
    assert is_expected_failure(TransportError("connection refused"))
    assert is_expected_failure(TerminalError("gave up"))
    assert not is_expected_failure(KeyError("bug"))


def test_a_group_is_expected_only_when_every_error_is() -> None:
    both = ExceptionGroup("writes", [Conflict("a"), TransportError("b")])
    assert is_expected_failure(both)
    assert not is_expected_failure(ExceptionGroup("writes", [Conflict("a"), ValueError("bug")]))


def test_the_line_joins_a_groups_messages_and_names_an_empty_one() -> None:
    group = ExceptionGroup("writes", [TransportError("refused\n  twice"), ValueError()])
    assert error_line(group) == "refused twice; ValueError"
