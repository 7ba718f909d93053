"""Value parsers shared by flags and the config file (Go-style booleans and durations, ports,
IP addresses) and the parser class whose usage errors are one line."""

from __future__ import annotations

import argparse
import ipaddress
from typing import NoReturn

from kcm.simulation import parse_duration as _parse_duration

__all__ = [
    "UsageErrorParser",
    "format_duration",
    "ip_address",
    "non_negative_int",
    "parse_bool",
    "parse_duration",
    "port",
    "positive_int",
]


class UsageErrorParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr,
    ``<prog>: error: <what>; see <prog> --help``, and exit status 2 (argparse would print the
    whole usage first)."""

    def error(self, message: str) -> NoReturn:
        one_line = " ".join(message.split())  # e.g. a wrapped library message
        self.exit(2, f"{self.prog}: error: {one_line}; see {self.prog} --help\n")


_TRUE = {"1", "t", "true", "y", "yes", "on"}
_FALSE = {"0", "f", "false", "n", "no", "off"}


def parse_bool(text: str) -> bool:
    """``true``/``false`` as Go's ``strconv.ParseBool`` reads them (plus yes/no, on/off).

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    value = str(text).strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean (use true or false)")


def parse_duration(text: str) -> float:
    """A Go duration (``15s``, ``1m30s``, ``500ms``) or a plain number of seconds, in seconds.

    Raises:
        argparse.ArgumentTypeError: not a duration, or negative.
    """
    try:
        return _parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def format_duration(seconds: float) -> str:
    """As Go's ``time.Duration.String`` (kube's ``--help``): ``15.0`` → ``15s``, ``0.5`` →
    ``500ms``, ``60`` → ``1m0s``, ``31536000`` → ``8760h0m0s``."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:g}s"
    if hours:
        return f"{int(hours)}h{int(minutes)}m{text}"
    if minutes:
        return f"{int(minutes)}m{text}"
    return text


def _int(text: str, *, minimum: int, what: str) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} is too small: {what}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    return _int(text, minimum=1, what="must be at least 1")


def non_negative_int(text: str) -> int:
    """An integer >= 0."""
    return _int(text, minimum=0, what="must not be negative")


def port(text: str) -> int:
    """A TCP port, 0-65535 (0: a free port, or off, depending on the flag)."""
    value = _int(text, minimum=0, what="a port is 0-65535")
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is too large: a port is 0-65535")
    return value


def ip_address(text: str) -> str:
    """An IPv4 or IPv6 address (as kube's ``--bind-address``), normalised."""
    try:
        return str(ipaddress.ip_address(str(text).strip()))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an IP address (e.g. 127.0.0.1, 0.0.0.0 or ::)"
        ) from None


def listen_host(text: str) -> str:
    """An address to listen on: an IP address, or ``localhost``."""
    if str(text).strip() == "localhost":
        return "localhost"
    return ip_address(text)
