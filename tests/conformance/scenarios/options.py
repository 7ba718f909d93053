"""Request options: DeleteOptions (propagation, grace period, preconditions), dryRun, the
resourceVersion semantics of GET and LIST, fieldManager and fieldValidation."""

from __future__ import annotations

from ..scenario import Http, Scenario

CMS = "/api/v1/namespaces/$ns/configmaps"
CM_A = f"{CMS}/a"
PODS = "/api/v1/namespaces/$ns/pods"
CM = {"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v1"}}
CREATE = Http("POST", CMS, CM, keep=("metadata.name", "metadata.uid"))
CREATE_SAVE = Http(
    "POST",
    CMS,
    CM,
    keep=("metadata.name", "metadata.resourceVersion"),
    save={"rv1": "metadata.resourceVersion", "uid": "metadata.uid"},
)
UPDATE = Http(
    "PATCH",
    CM_A,
    {"data": {"k": "v2"}},
    content_type="merge",
    keep=("data", "metadata.resourceVersion"),
    save={"rv2": "metadata.resourceVersion"},
)
GONE_KEEP = (
    "metadata.finalizers",
    "metadata.deletionTimestamp",
    "metadata.deletionGracePeriodSeconds",
)
SCHEDULED_POD = {
    "metadata": {"name": "p"},
    "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]},
}
DELETE_OPTIONS = {"apiVersion": "v1", "kind": "DeleteOptions"}
TOO_LARGE = "999999999"
LIST_KEEP = ("kind", "metadata", "items.0.metadata.name", "items.0.data", "items.1")


def _delete(sid: str, query: dict[str, str], doc: str, body: object = None) -> Scenario:
    """Create config map ``a``, delete it with ``query`` (and DeleteOptions ``body``), GET it."""
    return Scenario(
        f"options/{sid}",
        (
            CREATE,
            Http("DELETE", CM_A, body, query=query, keep=("kind", *GONE_KEEP)),
            Http("GET", CM_A, keep=("kind", *GONE_KEEP)),
        ),
        doc,
    )


SCENARIOS = [
    # -- DeleteOptions ---------------------------------------------------------------------------
    _delete(
        "delete-propagation-foreground",
        {"propagationPolicy": "Foreground"},
        "Foreground: the object stays with the foregroundDeletion finalizer (no GC here)",
    ),
    _delete(
        "delete-propagation-orphan",
        {"propagationPolicy": "Orphan"},
        "Orphan: the object stays with the orphan finalizer until the GC removes it",
    ),
    _delete(
        "delete-propagation-background",
        {"propagationPolicy": "Background"},
        "Background: deleted at once; the answer is the deleted object",
    ),
    _delete(
        "delete-propagation-invalid",
        {"propagationPolicy": "Sideways"},
        "an unknown propagationPolicy: 422, nothing deleted",
    ),
    _delete(
        "delete-options-in-body",
        {},
        "DeleteOptions in the DELETE body work like the query",
        {**DELETE_OPTIONS, "propagationPolicy": "Orphan"},
    ),
    _delete(
        "delete-orphanDependents-and-propagationPolicy",
        {},
        "orphanDependents and propagationPolicy together: 422",
        {**DELETE_OPTIONS, "orphanDependents": True, "propagationPolicy": "Background"},
    ),
    Scenario(
        "options/delete-pod-gracePeriodSeconds",
        (
            Http("POST", PODS, SCHEDULED_POD, keep=("metadata.name",)),
            Http("DELETE", f"{PODS}/p", query={"gracePeriodSeconds": "30"}, keep=GONE_KEEP),
            Http("GET", f"{PODS}/p", keep=GONE_KEEP),
        ),
        "a scheduled pod deleted with a grace period stays, with deletionGracePeriodSeconds",
    ),
    Scenario(
        "options/delete-pod-gracePeriodSeconds-0",
        (
            Http("POST", PODS, SCHEDULED_POD, keep=("metadata.name",)),
            Http("DELETE", f"{PODS}/p", query={"gracePeriodSeconds": "0"}, keep=GONE_KEEP),
            Http("GET", f"{PODS}/p", keep=GONE_KEEP),
        ),
        "gracePeriodSeconds=0 deletes a scheduled pod at once",
    ),
    Scenario(
        "options/delete-precondition-uid-mismatch-409",
        (
            CREATE,
            Http(
                "DELETE",
                CM_A,
                {
                    **DELETE_OPTIONS,
                    "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"},
                },
            ),
        ),
        "a uid precondition that does not match: 409 naming both uids",
    ),
    Scenario(
        "options/delete-precondition-rv-mismatch-409",
        (
            CREATE_SAVE,
            UPDATE,
            Http("DELETE", CM_A, {**DELETE_OPTIONS, "preconditions": {"resourceVersion": "$rv1"}}),
        ),
        "a stale resourceVersion precondition: 409 naming both resourceVersions",
    ),
    Scenario(
        "options/delete-precondition-match",
        (
            CREATE_SAVE,
            Http(
                "DELETE",
                CM_A,
                {**DELETE_OPTIONS, "preconditions": {"uid": "$uid", "resourceVersion": "$rv1"}},
                keep=("kind", "metadata.name"),
            ),
        ),
        "matching preconditions: deleted",
    ),
    # -- dryRun ----------------------------------------------------------------------------------
    Scenario(
        "options/dryrun-create",
        (Http("POST", CMS, CM, query={"dryRun": "All"}), Http("GET", CM_A)),
        "dryRun=All on create: 201 with the object as it would be stored, nothing stored",
    ),
    Scenario(
        "options/dryrun-update",
        (
            CREATE_SAVE,
            Http(
                "PUT",
                CM_A,
                {**CM, "metadata": {"name": "a", "resourceVersion": "$rv1"}, "data": {"k": "v9"}},
                query={"dryRun": "All"},
                keep=("data", "metadata.resourceVersion"),
            ),
            Http("GET", CM_A, keep=("data", "metadata.resourceVersion")),
        ),
        "dryRun=All on update: the new object is returned, the stored one is unchanged",
    ),
    Scenario(
        "options/dryrun-patch",
        (
            CREATE_SAVE,
            Http(
                "PATCH",
                CM_A,
                {"data": {"k": "v9"}},
                query={"dryRun": "All"},
                content_type="merge",
                keep=("data", "metadata.resourceVersion"),
            ),
            Http("GET", CM_A, keep=("data", "metadata.resourceVersion")),
        ),
        "dryRun=All on patch: the patched object is returned, the stored one is unchanged",
    ),
    Scenario(
        "options/dryrun-delete",
        (
            CREATE,
            Http("DELETE", CM_A, query={"dryRun": "All"}, keep=("kind", "metadata.name")),
            Http("GET", CM_A, keep=("kind", "metadata.name")),
        ),
        "dryRun=All on delete: the object is returned and still stored",
    ),
    Scenario(
        "options/dryrun-invalid-value",
        (Http("POST", CMS, CM, query={"dryRun": "Some"}), Http("GET", CM_A, keep=("kind",))),
        "dryRun=Some: rejected, nothing stored",
    ),
    # -- fieldManager, fieldValidation -----------------------------------------------------------
    Scenario(
        "options/fieldManager-too-long",
        (Http("POST", CMS, CM, query={"fieldManager": "m" * 129}),),
        "a fieldManager longer than 128 characters: rejected",
    ),
    Scenario(
        "options/fieldValidation-invalid-value",
        (Http("POST", CMS, CM, query={"fieldValidation": "Bogus"}, keep=("kind",)),),
        "fieldValidation=Bogus",
    ),
    # -- resourceVersion on GET and LIST ---------------------------------------------------------
    Scenario(
        "options/get-resourceVersion-0",
        (
            CREATE_SAVE,
            Http(
                "GET",
                CM_A,
                query={"resourceVersion": "0"},
                keep=("data", "metadata.resourceVersion"),
            ),
        ),
        "GET with resourceVersion=0 (from the cache): the object",
    ),
    Scenario(
        "options/list-resourceVersion-0",
        (CREATE_SAVE, Http("GET", CMS, query={"resourceVersion": "0"}, keep=LIST_KEEP)),
        "LIST with resourceVersion=0 (any state, from the cache)",
    ),
    Scenario(
        "options/list-exact-old-resourceVersion",
        (
            CREATE_SAVE,
            UPDATE,
            Http(
                "GET",
                CMS,
                query={"resourceVersion": "$rv1", "resourceVersionMatch": "Exact"},
                keep=LIST_KEEP,
            ),
        ),
        "LIST at an exact past resourceVersion: the state as it was then",
    ),
    Scenario(
        "options/list-notolderthan-old-resourceVersion",
        (
            CREATE_SAVE,
            UPDATE,
            Http(
                "GET",
                CMS,
                query={"resourceVersion": "$rv1", "resourceVersionMatch": "NotOlderThan"},
                keep=LIST_KEEP,
            ),
        ),
        "LIST not older than a past resourceVersion: the current state",
    ),
    Scenario(
        "options/get-too-large-resourceVersion",
        (
            CREATE,
            Http(
                "GET",
                CM_A,
                query={"resourceVersion": TOO_LARGE},
                response_headers=("retry-after",),
            ),
        ),
        "GET at a resourceVersion the server has not reached: a Timeout Status and Retry-After",
    ),
    Scenario(
        "options/list-too-large-resourceVersion",
        (
            CREATE,
            Http(
                "GET",
                CMS,
                query={"resourceVersion": TOO_LARGE},
                response_headers=("retry-after",),
            ),
        ),
        "LIST at a resourceVersion the server has not reached",
    ),
    Scenario(
        "options/list-exact-too-large-resourceVersion",
        (
            CREATE,
            Http(
                "GET",
                CMS,
                query={"resourceVersion": TOO_LARGE, "resourceVersionMatch": "Exact"},
                response_headers=("retry-after",),
            ),
        ),
        "LIST at an exact resourceVersion the server has not reached",
    ),
    Scenario(
        "options/get-resourceVersion-not-a-number",
        (CREATE, Http("GET", CM_A, query={"resourceVersion": "abc"})),
        "GET with resourceVersion=abc",
    ),
]
