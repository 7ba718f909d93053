"""The scenario language of the differential suite: short scripts of requests.

A :class:`Scenario` is a list of steps run in order against one API server: :class:`Http`
(one request), :class:`Watch` (open a watch, read some events) and :class:`Kubectl` (run
kubectl). Each step yields an *outcome* (status code, the Status or object that came back,
Warning headers, kubectl's exit code and output), which :mod:`normalise` strips of what changes
from run to run. The recorder writes the outcomes a real kube-apiserver gives into
``golden/<area>.json``; the test replays every scenario against the embedded server and
compares.

Values from an earlier response can be used later: ``save={"rv": "metadata.resourceVersion"}``
keeps a field, and the text ``$rv`` anywhere in a later path, query value or body is replaced
by it (``$$`` is a literal ``$``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["PRESENT", "Http", "Kubectl", "Scenario", "Sleep", "Step", "WaitFor", "Watch"]

PRESENT = "<present>"
"""``WaitFor(..., field, PRESENT)``: wait until ``field`` has any value."""


@dataclass(frozen=True)
class Http:
    """One HTTP request.

    Attributes:
        method: ``GET``, ``POST``, ``PUT``, ``PATCH``, ``DELETE``.
        path: the URL path (``/api/v1/namespaces/$ns/configmaps``); ``$ns`` is the scenario's
            namespace.
        body: a JSON-able value (sent as JSON) or ``bytes``/``str`` (sent as is).
        query: query parameters (values are sent exactly as given: ``{"watch": "True"}``).
        content_type: ``Content-Type``; JSON by default, the patch type for PATCH.
        headers: extra request headers.
        save: name -> dotted path into the response body, kept for later steps.
        keep: dotted paths of the response body to compare (None: the whole normalised body);
            see :func:`normalise.keep_paths` for list selectors (``resources[name=pods]``) and
            ``keys()``.
        response_headers: response headers to put in the outcome (lower-case names, e.g.
            ``("content-type", "retry-after")``); a missing one is ``None``.
    """

    method: str
    path: str
    body: Any = None
    query: dict[str, str] | None = None
    content_type: str | None = None
    headers: dict[str, str] | None = None
    save: dict[str, str] | None = None
    keep: tuple[str, ...] | None = None
    response_headers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Watch:
    """Open a watch (``?watch=...`` is up to ``query``), read ``events`` events (or until the
    server ends the stream or ``timeout`` seconds pass), then close it. The outcome is the
    status code and each event's type and (normalised, ``keep``-filtered) object. With
    ``closed=True`` the outcome also says whether the server ended the stream itself (before
    ``events`` events arrived and before ``timeout``). ``during`` are requests made once the
    watch's response headers have arrived, before any event is read (writes the open watch
    must see); their outcomes are in the watch's outcome, under ``during``. ``headers`` are
    extra request headers (``Accept``); ``response_headers`` are put in the outcome, as
    :class:`Http`'s."""

    path: str
    query: dict[str, str] = field(default_factory=dict)
    events: int = 1
    timeout: float = 5.0
    keep: tuple[str, ...] | None = None
    closed: bool = False
    during: tuple[Http, ...] = ()
    headers: dict[str, str] | None = None
    response_headers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kubectl:
    """Run ``kubectl <args>`` (``--kubeconfig`` is added) with ``stdin``; the outcome is the exit
    code, stdout (parsed when it is JSON) and the first line of stderr."""

    args: tuple[str, ...]
    stdin: str | None = None
    keep: tuple[str, ...] | None = None


@dataclass(frozen=True)
class WaitFor:
    """Poll ``GET path`` until it answers ``code`` and (when ``field`` is given) the body's
    ``field`` equals ``equals``, or ``timeout`` seconds pass. For what a real server does in the
    background (a CRD becoming Established, an object going away: ``code=404``). The outcome is
    deterministic: only whether the condition was reached, not how long it took.

    ``field`` is a dotted path; a part ``[key=value]`` picks the first list item whose ``key``
    is ``value``: ``status.conditions.[type=Established].status``. ``equals=PRESENT`` waits for
    any value.
    """

    path: str
    field: str | None = None
    equals: Any = None
    code: int = 200
    timeout: float = 10.0


@dataclass(frozen=True)
class Sleep:
    """Wait ``seconds`` (for what cannot be polled for); the outcome is ``{"sleep": seconds}``."""

    seconds: float


Step = Http | Watch | Kubectl | WaitFor | Sleep


@dataclass(frozen=True)
class Scenario:
    """A named script of steps.

    Attributes:
        id: unique, stable, ``area/what-it-checks`` (the key in the golden file).
        steps: run in order; each gives one outcome.
        namespace: created before the steps (with a ``default`` ServiceAccount, which the
            real server's admission needs for pods) and substituted for ``$ns``; None for
            cluster-scoped scenarios.
        doc: what the scenario shows, one line.
    """

    id: str
    steps: tuple[Step, ...]
    doc: str = ""
    namespace: bool = True

    @property
    def area(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def ns(self) -> str:
        """The scenario's namespace: derived from its id, so it is stable and unique."""
        slug = "".join(c if c.isalnum() else "-" for c in self.id.lower()).strip("-")
        return f"cf-{slug}"[:63].rstrip("-")
