"""Metadata-only responses: ``Accept: application/json;as=PartialObjectMetadata[List];
g=meta.k8s.io;v=v1`` (what client-go's metadata client and informers send) on list, get and
watch, the v1beta1 form, fallbacks, and the 406s for a conversion the server does not offer
or that does not fit the request (a list asked for as one object, and the other way round).
"""

from __future__ import annotations

from ..scenario import Http, Scenario, Watch

CMS = "/api/v1/namespaces/$ns/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/$ns/deployments"
ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
LIST_BETA = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1"
CTYPE = ("content-type",)


def _cm(name: str, save: str | None = None, *, hold: bool = True) -> Http:
    meta: dict[str, object] = {
        "name": name,
        "labels": {"app": "web"},
        "annotations": {"note": "kept"},
    }
    if hold:
        meta["finalizers"] = ["example.com/hold"]
    body = {"metadata": meta, "data": {"k": "v"}}
    return Http(
        "POST",
        CMS,
        body,
        keep=("metadata.name",),
        save={save: "metadata.resourceVersion"} if save else None,
    )


def _release(name: str) -> Http:
    """Drop the finalizer, so the namespace can go."""
    return Http(
        "PATCH",
        f"{CMS}/{name}",
        {"metadata": {"finalizers": None}},
        content_type="merge",
        keep=("metadata.name",),
    )


def _get(path: str, accept: str, keep: tuple[str, ...] | None = None) -> Http:
    return Http("GET", path, headers={"Accept": accept}, keep=keep, response_headers=CTYPE)


SCENARIOS = [
    Scenario(
        "metadata/list-v1",
        (_cm("a"), _cm("b"), _get(CMS, LIST), _release("a"), _release("b")),
        "a list as PartialObjectMetadataList: each item's metadata whole (managedFields too), "
        "the list's apiVersion/kind meta.k8s.io/v1, items kind PartialObjectMetadata",
    ),
    Scenario(
        "metadata/list-v1beta1",
        (_cm("a"), _get(CMS, LIST_BETA), _release("a")),
        "the v1beta1 form: the list and its items are meta.k8s.io/v1beta1",
    ),
    Scenario(
        "metadata/list-with-json-fallback",
        (_cm("a"), _get(CMS, f"{LIST}, application/json"), _release("a")),
        "the metadata form first, plain JSON as a fallback: the metadata list",
    ),
    Scenario(
        "metadata/list-empty",
        (_get(CMS, LIST),),
        "an empty metadata list",
    ),
    Scenario(
        "metadata/list-paged-remaining",
        (
            _cm("a"),
            _cm("b"),
            Http(
                "GET",
                CMS,
                query={"limit": "1"},
                headers={"Accept": "application/json"},
                keep=("metadata.keys()",),
            ),
            _release("a"),
            _release("b"),
        ),
        "for comparison: the plain page's list metadata",
    ),
    Scenario(
        "metadata/list-paged",
        (
            _cm("a"),
            _cm("b"),
            Http(
                "GET",
                CMS,
                query={"limit": "1"},
                headers={"Accept": LIST},
                keep=("kind", "metadata.keys()", "items.0.metadata.name"),
            ),
            _release("a"),
            _release("b"),
        ),
        "a page of a metadata list keeps the list's continue token",
    ),
    Scenario(
        "metadata/get-v1",
        (_cm("a"), _get(f"{CMS}/a", ONE), _release("a")),
        "one object as PartialObjectMetadata: its metadata whole, nothing else",
    ),
    Scenario(
        "metadata/get-as-list-not-acceptable",
        (_cm("a"), _get(f"{CMS}/a", LIST), _release("a")),
        "an object asked for as a PartialObjectMetadataList: 406",
    ),
    Scenario(
        "metadata/list-as-object-not-acceptable",
        (_get(CMS, ONE),),
        "a list asked for as one PartialObjectMetadata: 406",
    ),
    Scenario(
        "metadata/list-as-object-with-fallback",
        (_get(CMS, f"{ONE}, application/json"),),
        "a fallback does not help once the first acceptable form fails to convert: 406",
    ),
    Scenario(
        "metadata/deployments-as-object-not-acceptable",
        (_get(DEPLOYMENTS, ONE),),
        "the 406 names the list's type (another group)",
    ),
    Scenario(
        "metadata/unknown-kind-not-acceptable",
        (_get(CMS, "application/json;as=Foo;g=meta.k8s.io;v=v1"),),
        "a conversion the server does not know: 406 listing the media types it serves",
    ),
    Scenario(
        "metadata/unknown-version-not-acceptable",
        (_get(CMS, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v2"),),
        "PartialObjectMetadataList of a version meta.k8s.io does not have: 406",
    ),
    Scenario(
        "metadata/wrong-group-not-acceptable",
        (_get(CMS, "application/json;as=PartialObjectMetadataList;g=apps;v=v1"),),
        "PartialObjectMetadataList of another group: 406",
    ),
    Scenario(
        "metadata/unknown-kind-with-fallback",
        (
            _cm("a"),
            _get(
                CMS,
                "application/json;as=Foo;g=meta.k8s.io;v=v1, application/json",
                keep=("apiVersion", "kind", "items.0.data"),
            ),
            _release("a"),
        ),
        "an unknown conversion then plain JSON: the plain list",
    ),
    Scenario(
        "metadata/watch-v1",
        (
            Http("GET", CMS, keep=("kind",), save={"rv": "metadata.resourceVersion"}),
            _cm("a", hold=False),
            Http(
                "PATCH",
                f"{CMS}/a",
                {"metadata": {"labels": {"app": "db"}}},
                content_type="merge",
                keep=("metadata.labels",),
            ),
            Http("DELETE", f"{CMS}/a", keep=("kind",)),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "$rv"},
                events=3,
                headers={"Accept": f"{ONE}, application/json"},
                response_headers=CTYPE,
            ),
        ),
        "a watch as PartialObjectMetadata: every event's object is the metadata only",
    ),
    Scenario(
        "metadata/watch-as-list",
        (
            Http("GET", CMS, keep=("kind",), save={"rv": "metadata.resourceVersion"}),
            _cm("a"),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "$rv"},
                events=1,
                closed=True,
                headers={"Accept": LIST},
                response_headers=CTYPE,
                keep=("apiVersion", "kind", "metadata.name"),
            ),
            _release("a"),
        ),
        "a watch asked for as a list: the first event fails to convert and ends the stream",
    ),
]
