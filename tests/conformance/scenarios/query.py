"""Query parameters as kube-apiserver parses them: booleans, limit/continue, label and field
selectors (syntax errors, which fields each kind supports), resourceVersionMatch, timeoutSeconds.
"""

from __future__ import annotations

from ..scenario import Http, Scenario, Watch

CMS = "/api/v1/namespaces/$ns/configmaps"
PODS = "/api/v1/namespaces/$ns/pods"
NAMES = ("kind", "items.0.metadata.name", "items.1.metadata.name", "items.2.metadata.name")
CONTAINERS = [{"name": "c", "image": "busybox"}]


def _cm(name: str, **labels: str) -> Http:
    meta: dict[str, object] = {"name": name}
    if labels:
        meta["labels"] = labels
    body = {"metadata": meta, "data": {"k": name}}
    return Http("POST", CMS, body, keep=("metadata.name",))


SETUP = (_cm("a", app="web", tier="front"), _cm("b", app="db"))
"""Two labelled config maps, ``a`` (app=web, tier=front) and ``b`` (app=db)."""


def _list(sid: str, query: dict[str, str], doc: str, path: str = CMS) -> Scenario:
    """List the two config maps with ``query``: which come back (or the error)."""
    return Scenario(f"query/{sid}", (*SETUP, Http("GET", path, query=query, keep=NAMES)), doc)


def _watch(sid: str, value: str, doc: str) -> Scenario:
    """``watch=value`` with resourceVersion=0: a watch sends the two synthetic ADDED events."""
    return Scenario(
        f"query/{sid}",
        (
            _cm("a", app="web"),
            Watch(CMS, {"watch": value, "resourceVersion": "0"}, keep=("metadata.name",)),
        ),
        doc,
    )


SCENARIOS = [
    # -- booleans --------------------------------------------------------------------------------
    _watch("watch-1-is-a-watch", "1", "watch=1 opens a watch"),
    _watch("watch-yes-is-a-watch", "yes", "watch=yes: anything but 0/false is true"),
    _watch("watch-empty-is-a-watch", "", "watch= (present, empty) is true"),
    _list(
        "watch-false-is-a-list",
        {"watch": "false", "timeoutSeconds": "1"},
        "watch=false is a plain list",
    ),
    _list(
        "watch-uppercase-false-is-a-list",
        {"watch": "FALSE", "timeoutSeconds": "1"},
        "watch=FALSE: false is compared case-insensitively",
    ),
    _list("watch-0-is-a-list", {"watch": "0", "timeoutSeconds": "1"}, "watch=0 is a plain list"),
    _list(
        "allowWatchBookmarks-on-a-list",
        {"allowWatchBookmarks": "true"},
        "allowWatchBookmarks on a list is ignored",
    ),
    # -- limit and continue ----------------------------------------------------------------------
    Scenario(
        "query/limit-and-continue",
        (
            *SETUP,
            _cm("c"),
            Http(
                "GET",
                CMS,
                query={"limit": "2"},
                keep=(*NAMES, "metadata"),
                save={"next": "metadata.continue"},
            ),
            Http("GET", CMS, query={"limit": "2", "continue": "$next"}, keep=(*NAMES, "metadata")),
        ),
        "limit=2 gives a page and a continue token; the token gives the rest and no token",
    ),
    _list("limit-0-is-no-limit", {"limit": "0"}, "limit=0 means no limit"),
    _list("limit-negative", {"limit": "-1"}, "a negative limit"),
    _list("limit-not-a-number", {"limit": "two"}, "a limit that is not a number"),
    _list("continue-invalid-token", {"continue": "not-a-token"}, "a continue token that is junk"),
    Scenario(
        "query/continue-with-resourceVersion",
        (
            *SETUP,
            Http(
                "GET",
                CMS,
                query={"limit": "1"},
                keep=NAMES,
                save={"next": "metadata.continue", "rv": "metadata.resourceVersion"},
            ),
            Http("GET", CMS, query={"continue": "$next", "resourceVersion": "$rv"}),
        ),
        "a valid continue token together with resourceVersion",
    ),
    # -- label selectors -------------------------------------------------------------------------
    _list(
        "labelSelector-set-based",
        {"labelSelector": "app in (web,db),!tier"},
        "a set-based selector with a does-not-exist term",
    ),
    _list("labelSelector-not-equal", {"labelSelector": "app!=web"}, "!= also matches no label"),
    _list(
        "labelSelector-unclosed-paren-400",
        {"labelSelector": "app in (web"},
        "a selector that does not parse: 400 with the parser's message",
    ),
    _list(
        "labelSelector-bad-value-400",
        {"labelSelector": "app=-web"},
        "a label value that is not a valid label value: 400",
    ),
    # -- field selectors -------------------------------------------------------------------------
    _list(
        "fieldSelector-metadata-name",
        {"fieldSelector": "metadata.name!=a"},
        "metadata.name!= works on every kind",
    ),
    _list(
        "fieldSelector-no-operator-400",
        {"fieldSelector": "metadata.name"},
        "a field selector term without an operator: 400",
    ),
    _list(
        "fieldSelector-unsupported-on-configmaps-400",
        {"fieldSelector": "data.k=a"},
        "a field configmaps do not index: 400 'field label not supported'",
    ),
    Scenario(
        "query/fieldSelector-pods-spec-nodeName",
        (
            Http(
                "POST",
                PODS,
                {"metadata": {"name": "on"}, "spec": {"nodeName": "n1", "containers": CONTAINERS}},
                keep=("metadata.name",),
            ),
            Http(
                "POST",
                PODS,
                {"metadata": {"name": "off"}, "spec": {"containers": CONTAINERS}},
                keep=("metadata.name",),
            ),
            Http("GET", PODS, query={"fieldSelector": "spec.nodeName=n1"}, keep=NAMES),
            Http("GET", PODS, query={"fieldSelector": "spec.nodeName="}, keep=NAMES),
            Http(
                "GET",
                PODS,
                query={"fieldSelector": "status.phase=Pending,metadata.name!=on"},
                keep=NAMES,
            ),
        ),
        "pods select on spec.nodeName (empty: unscheduled) and status.phase",
    ),
    Scenario(
        "query/fieldSelector-pods-unsupported-400",
        (Http("GET", PODS, query={"fieldSelector": "spec.foo=x"}),),
        "a field pods do not index: 400 naming it",
    ),
    Scenario(
        "query/fieldSelector-secrets-type",
        (
            Http(
                "POST",
                "/api/v1/namespaces/$ns/secrets",
                {"metadata": {"name": "s"}, "type": "Opaque"},
                keep=("type",),
            ),
            Http(
                "GET",
                "/api/v1/namespaces/$ns/secrets",
                query={"fieldSelector": "type=Opaque"},
                keep=NAMES,
            ),
        ),
        "secrets select on type",
    ),
    Scenario(
        "query/fieldSelector-events-involvedObject",
        (
            Http(
                "POST",
                "/api/v1/namespaces/$ns/events",
                {
                    "metadata": {"name": "e"},
                    "involvedObject": {"kind": "Pod", "name": "p", "namespace": "$ns"},
                    "reason": "Test",
                    "message": "m",
                    "type": "Normal",
                },
                keep=("metadata.name",),
            ),
            Http(
                "GET",
                "/api/v1/namespaces/$ns/events",
                query={"fieldSelector": "involvedObject.kind=Pod,involvedObject.name=p"},
                keep=NAMES,
            ),
            Http(
                "GET",
                "/api/v1/namespaces/$ns/events",
                query={"fieldSelector": "reason=Other"},
                keep=NAMES,
            ),
        ),
        "core events select on involvedObject.* and reason",
    ),
    # -- resourceVersionMatch --------------------------------------------------------------------
    _list(
        "resourceVersionMatch-without-resourceVersion",
        {"resourceVersionMatch": "NotOlderThan"},
        "resourceVersionMatch needs resourceVersion",
    ),
    _list(
        "resourceVersionMatch-invalid",
        {"resourceVersionMatch": "Newest", "resourceVersion": "0"},
        "an unknown resourceVersionMatch",
    ),
    _list(
        "resourceVersionMatch-exact-with-0",
        {"resourceVersionMatch": "Exact", "resourceVersion": "0"},
        "Exact is forbidden with resourceVersion=0",
    ),
    _list(
        "resourceVersionMatch-notolderthan-with-0",
        {"resourceVersionMatch": "NotOlderThan", "resourceVersion": "0", "labelSelector": "tier"},
        "NotOlderThan with resourceVersion=0: any state (one item: the cache's order is random)",
    ),
    Scenario(
        "query/resourceVersionMatch-on-watch",
        (
            Watch(
                CMS,
                {"watch": "1", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "0"},
                timeout=2,
            ),
        ),
        "resourceVersionMatch is forbidden for watch",
    ),
    # -- timeoutSeconds and the rest -------------------------------------------------------------
    _list("timeoutSeconds-on-a-list", {"timeoutSeconds": "1"}, "timeoutSeconds on a list"),
    _list("timeoutSeconds-not-a-number", {"timeoutSeconds": "soon"}, "timeoutSeconds=soon"),
    _list("unknown-parameter-ignored", {"frobnicate": "yes"}, "unknown query parameters"),
]
