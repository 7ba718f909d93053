"""Watches: from a resourceVersion, from 0, bookmarks, timeoutSeconds, selectors.

A watch sees writes made *before* it opens by starting from an earlier resourceVersion, and
writes made while it is open through ``Watch.during``.

Not here: a too-old resourceVersion (410 Expired). A fresh 1.24 server's watch caches start at
etcd revision 1 and keep every event until the first compaction (5 minutes) makes them relist,
so whether resourceVersion=1 is too old depends on the cluster's age: unstable.
"""

from __future__ import annotations

from ..scenario import Http, Scenario, Watch

CMS = "/api/v1/namespaces/$ns/configmaps"
NAME_DATA = ("metadata.name", "data", "metadata.resourceVersion")


def _cm(name: str, save: str | None = None, **labels: str) -> Http:
    meta: dict[str, object] = {"name": name}
    if labels:
        meta["labels"] = labels
    body = {"metadata": meta, "data": {"k": "v1"}}
    return Http(
        "POST",
        CMS,
        body,
        keep=("metadata.name", "metadata.resourceVersion"),
        save={save: "metadata.resourceVersion"} if save else None,
    )


def _patch(name: str, body: dict[str, object]) -> Http:
    return Http(
        "PATCH",
        f"{CMS}/{name}",
        body,
        content_type="merge",
        keep=("metadata.resourceVersion", "metadata.labels", "data"),
    )


def _delete(name: str) -> Http:
    return Http("DELETE", f"{CMS}/{name}", keep=("kind",))


SCENARIOS = [
    Scenario(
        "watch/from-resourceVersion-in-order",
        (
            _cm("a", save="rv"),
            _patch("a", {"data": {"k": "v2"}}),
            _cm("b"),
            _delete("a"),
            Watch(CMS, {"watch": "1", "resourceVersion": "$rv"}, events=3, keep=NAME_DATA),
        ),
        "a watch from a resourceVersion replays the later writes in order",
    ),
    Scenario(
        "watch/deleted-event-object",
        (
            _cm("a", save="rv"),
            _delete("a"),
            Watch(CMS, {"watch": "1", "resourceVersion": "$rv"}),
        ),
        "the DELETED event carries the object's last state, whole",
    ),
    Scenario(
        "watch/deleted-when-the-last-finalizer-goes",
        (
            Http(
                "POST",
                CMS,
                {"metadata": {"name": "a", "finalizers": ["example.com/hold"]}},
                keep=("metadata.finalizers",),
                save={"rv": "metadata.resourceVersion"},
            ),
            Http("DELETE", f"{CMS}/a", keep=("metadata.finalizers", "metadata.deletionTimestamp")),
            Http("PATCH", f"{CMS}/a", {"metadata": {"finalizers": None}}, content_type="merge"),
            Http("GET", f"{CMS}/a", keep=("code", "reason")),
            Watch(CMS, {"watch": "1", "resourceVersion": "$rv"}, events=2),
        ),
        "removing the last finalizer of a deleted object deletes it: the PATCH answers and the"
        " DELETED event carries which state (finalizers, resourceVersion)",
    ),
    Scenario(
        "watch/resourceVersion-0-synthetic-added",
        (
            _cm("a"),
            _patch("a", {"data": {"k": "v2"}}),
            Watch(CMS, {"watch": "1", "resourceVersion": "0"}, events=2, timeout=2, keep=NAME_DATA),
        ),
        "resourceVersion=0: one synthetic ADDED with the current state, then nothing",
    ),
    Scenario(
        "watch/no-resourceVersion-synthetic-added",
        (
            _cm("a"),
            _patch("a", {"data": {"k": "v2"}}),
            Watch(CMS, {"watch": "1"}, events=2, timeout=2, keep=NAME_DATA),
        ),
        "no resourceVersion: the current state as ADDED events, then nothing",
    ),
    Scenario(
        "watch/future-resourceVersion",
        (
            _cm("a"),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "999999999"},
                events=1,
                timeout=4,
                closed=True,
            ),
        ),
        "a resourceVersion the server has not reached",
    ),
    Scenario(
        "watch/invalid-resourceVersion",
        (Watch(CMS, {"watch": "1", "resourceVersion": "abc"}, closed=True),),
        "resourceVersion=abc on a watch",
    ),
    Scenario(
        "watch/bookmarks-none-without-new-events",
        (
            _cm("a", save="rv"),
            Watch(
                CMS,
                {
                    "watch": "1",
                    "resourceVersion": "$rv",
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": "3",
                },
                events=1,
                timeout=6,
                closed=True,
            ),
        ),
        "allowWatchBookmarks: no write after the watch opens, so no BOOKMARK before the timeout"
        " (kube-apiserver sends one only at a resourceVersion newer than the watch's)",
    ),
    Scenario(
        "watch/bookmark-after-a-write",
        (
            _cm("a", save="rv"),
            Watch(
                CMS,
                {
                    "watch": "1",
                    "resourceVersion": "$rv",
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": "5",
                },
                events=3,
                timeout=8,
                keep=("kind", "apiVersion", "metadata.name", "metadata.resourceVersion"),
                closed=True,
                during=(_patch("a", {"data": {"k": "v2"}}),),
            ),
        ),
        "allowWatchBookmarks and a write while open: the MODIFIED event, then a BOOKMARK"
        " (kind, apiVersion, resourceVersion only) about 2s before timeoutSeconds ends the stream",
    ),
    Scenario(
        "watch/sees-writes-while-open",
        (
            _cm("a", save="rv"),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "$rv"},
                events=3,
                timeout=3,
                keep=NAME_DATA,
                during=(_patch("a", {"data": {"k": "v2"}}), _cm("b"), _delete("a")),
            ),
        ),
        "writes made while a watch is open arrive as MODIFIED, ADDED, DELETED, in order",
    ),
    Scenario(
        "watch/timeoutSeconds-ends-the-stream",
        (
            _cm("a"),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "0", "timeoutSeconds": "1"},
                events=3,
                timeout=5,
                keep=("metadata.name",),
                closed=True,
            ),
        ),
        "timeoutSeconds=1: the server ends the stream after a second",
    ),
    Scenario(
        "watch/labelSelector-object-leaves",
        (
            _cm("a", save="rv", app="web"),
            _patch("a", {"metadata": {"labels": {"app": "db"}}}),
            _patch("a", {"data": {"k": "v3"}}),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "$rv", "labelSelector": "app=web"},
                events=2,
                timeout=2,
                keep=("metadata.name", "metadata.labels", "metadata.resourceVersion"),
            ),
        ),
        "an object leaving the selector: DELETED with its old state at the new resourceVersion",
    ),
    Scenario(
        "watch/labelSelector-object-enters",
        (
            _cm("a", save="rv", app="db"),
            _patch("a", {"metadata": {"labels": {"app": "web"}}}),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "$rv", "labelSelector": "app=web"},
                keep=("metadata.name", "metadata.labels", "metadata.resourceVersion"),
            ),
        ),
        "an object entering the selector is an ADDED event",
    ),
    Scenario(
        "watch/fieldSelector-single-object",
        (
            _cm("x", save="rv"),
            _cm("y"),
            _patch("y", {"data": {"k": "v2"}}),
            _patch("x", {"data": {"k": "v2"}}),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "$rv", "fieldSelector": "metadata.name=x"},
                events=2,
                timeout=2,
                keep=NAME_DATA,
            ),
        ),
        "fieldSelector=metadata.name=x: only x's events",
    ),
    Scenario(
        "watch/legacy-watch-path-single-object",
        (
            _cm("x", save="rv"),
            _cm("y"),
            _patch("x", {"data": {"k": "v2"}}),
            Watch(
                "/api/v1/watch/namespaces/$ns/configmaps/x",
                {"resourceVersion": "$rv"},
                events=2,
                timeout=2,
                keep=NAME_DATA,
            ),
        ),
        "the deprecated /watch/ path to one object: only that object's events",
    ),
    Scenario(
        "watch/all-namespaces-fieldSelector-namespace",
        (
            _cm("a", save="rv"),
            _patch("a", {"data": {"k": "v2"}}),
            Watch(
                "/api/v1/configmaps",
                {"watch": "1", "resourceVersion": "$rv", "fieldSelector": "metadata.namespace=$ns"},
                keep=("metadata.namespace", *NAME_DATA),
            ),
        ),
        "a watch across namespaces narrowed by metadata.namespace",
    ),
    Scenario(
        "watch/invalid-labelSelector-400",
        (Watch(CMS, {"watch": "1", "labelSelector": "app in (web"}),),
        "a watch with a selector that does not parse: 400 before the stream starts",
    ),
    Scenario(
        "watch/unwatchable-resource-405",
        (Watch("/api/v1/componentstatuses", {"watch": "1"}),),
        "a resource without the watch verb: 405",
    ),
]
