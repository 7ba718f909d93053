"""What an update may change, checked on every write path as kube-apiserver checks it:
ObjectMeta (update) rules, ownerReferences, finalizers, and the pod spec and status rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._rest import Rest
from kcm.apiserver._status import StatusError


def _cm(**meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "a", **meta}, "data": {"k": "v"}}


@pytest.fixture
def rest() -> Rest:
    return ApiServer().rest


def _res(rest: Rest, plural: str) -> Any:
    res = rest.registry.lookup("", "v1", plural)
    assert res is not None
    return res


def _merge(
    rest: Rest, plural: str, name: str, patch: Any, sub: str = "", kind: str = "merge"
) -> Any:
    raw = json.dumps(patch).encode()
    ctype = f"application/{kind}-patch+json"
    return rest.patch(_res(rest, plural), "default", name, raw, ctype, {}, subresource=sub)[1]


def _invalid(call: Any) -> StatusError:
    with pytest.raises(StatusError) as caught:
        call()
    assert caught.value.code == 422, caught.value.message
    return caught.value


def test_metadata_that_may_not_change_and_causes_reported_as_kube_does(rest: Rest) -> None:
    rest.create(_res(rest, "configmaps"), "default", _cm(), {})
    uid = _invalid(lambda: _merge(rest, "configmaps", "a", {"metadata": {"uid": "other"}}))
    details = uid.details or {}
    assert [c["field"] for c in details["causes"]] == ["metadata.uid", "metadata.uid"]
    assert (
        uid.message
        == 'ConfigMap "a" is invalid: metadata.uid: Invalid value: "other": field is immutable'
    )
    when = {"metadata": {"deletionTimestamp": "2001-02-03T04:05:06Z"}}
    deletion = _invalid(lambda: _merge(rest, "configmaps", "a", when))
    assert deletion.message.endswith(
        "metadata.deletionTimestamp: Invalid value: 2001-02-03 04:05:06 +0000 UTC: field is "
        "immutable"
    )
    labels = _invalid(
        lambda: _merge(rest, "configmaps", "a", {"metadata": {"labels": {"k": "v" * 64}}})
    )
    assert len((labels.details or {})["causes"]) == 4  # common checks, then the kind's, twice each


def test_a_put_with_another_uid_is_a_precondition_conflict(rest: Rest) -> None:
    rest.create(_res(rest, "configmaps"), "default", _cm(), {})
    body = _cm(uid="other")
    with pytest.raises(StatusError) as caught:
        rest.update(_res(rest, "configmaps"), "default", "a", body, {})
    assert caught.value.code == 409
    assert "Precondition failed: UID in precondition: other" in caught.value.message


def test_no_new_finalizers_while_deleting_and_owner_references(rest: Rest) -> None:
    res = _res(rest, "configmaps")
    rest.create(res, "default", _cm(finalizers=["x.io/f"]), {})
    rest.delete(res, "default", "a", {}, {})
    more = {"metadata": {"finalizers": ["x.io/f", "x.io/g"]}}
    added = _invalid(lambda: _merge(rest, "configmaps", "a", more))
    assert added.message.endswith(
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being "
        'deleted, found new finalizers []string{"x.io/g"}'
    )
    refs = [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}, {"uid": "u2"}]
    owners = _invalid(lambda: rest.create(res, "default", _cm(name="b", ownerReferences=refs), {}))
    assert [c["field"] for c in (owners.details or {})["causes"]] == [
        "metadata.ownerReferences",
        "metadata.ownerReferences.apiVersion",
        "metadata.ownerReferences.kind",
        "metadata.ownerReferences.name",
    ]
    assert "/v1, Kind=Event is disallowed from being an owner" in owners.message


def test_a_resource_version_on_create_is_a_bare_500(rest: Rest) -> None:
    with pytest.raises(StatusError) as caught:
        rest.create(
            _res(rest, "configmaps"),
            "default",
            _cm(resourceVersion="5"),
            {},
        )
    status = caught.value.to_status()
    assert (status["code"], status["message"], "reason" in status) == (
        500,
        "resourceVersion should not be set on objects to be created",
        False,
    )


def test_pod_spec_and_status_rules(rest: Rest) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    rest.create(_res(rest, "pods"), "default", pod, {})
    image = {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}
    patched = _merge(rest, "pods", "p", image, kind="strategic-merge")
    assert patched["spec"]["containers"][0]["image"] == "nginx:2"
    fixed = _invalid(lambda: _merge(rest, "pods", "p", {"spec": {"hostname": "h"}}))
    assert fixed.message.startswith(
        'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than '
    )
    assert '+ spec.hostname: "h"' in fixed.message
    two = {"spec": {"containers": [{"name": "d", "image": "b"}]}}
    added = _invalid(lambda: _merge(rest, "pods", "p", two, kind="strategic-merge"))
    assert added.message.endswith(
        "spec.containers: Forbidden: pod updates may not add or remove containers"
    )
    deadline = _merge(rest, "pods", "p", {"spec": {"activeDeadlineSeconds": 10}})
    assert deadline["spec"]["activeDeadlineSeconds"] == 10
    longer = _invalid(lambda: _merge(rest, "pods", "p", {"spec": {"activeDeadlineSeconds": 20}}))
    assert longer.message.endswith("must be less than or equal to previous value")
    status = _merge(rest, "pods", "p", {"status": {"podIP": "10.0.0.1"}}, sub="status")
    assert status["status"]["podIPs"] == [{"ip": "10.0.0.1"}]
    bad_ip = _invalid(lambda: _merge(rest, "pods", "p", {"status": {"podIP": "x"}}, sub="status"))
    assert bad_ip.message.endswith(
        'status.podIPs[0]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or '
        "2001:db8::ffff)"
    )
