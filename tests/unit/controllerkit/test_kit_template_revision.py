"""A pod template as ControllerRevision data: Go's encoding, its hash, and the way back."""

from __future__ import annotations

from kcm.controllerkit import hash_controller_revision, template_from_patch, template_patch
from kcm.models.apps_v1 import ControllerRevision
from kcm.models.core_v1 import (
    Container,
    EphemeralVolumeSource,
    PersistentVolumeClaimTemplate,
    PodSpec,
    PodTemplateSpec,
    Volume,
)
from kcm.models.meta_v1 import ObjectMeta

TEMPLATE = PodTemplateSpec(
    metadata=ObjectMeta(labels={"app": "web"}),
    spec=PodSpec(
        containers=[
            Container(
                name="main",
                image="nginx:1.25",
                image_pull_policy="IfNotPresent",
                termination_message_path="/dev/termination-log",
                termination_message_policy="File",
            )
        ],
        dns_policy="ClusterFirst",
        restart_policy="Always",
        scheduler_name="default-scheduler",
        termination_grace_period_seconds=30,
    ),
)


def test_the_patch_replaces_the_template_as_go_writes_it() -> None:
    data = template_patch(TEMPLATE)
    template = data["spec"]["template"]
    assert template["$patch"] == "replace"
    assert template["metadata"] == {"creationTimestamp": None, "labels": {"app": "web"}}
    assert template["spec"]["containers"][0]["resources"] == {}  # a Go struct: always written


def test_the_hash_is_the_go_controllers() -> None:
    # Recorded from the Go kube-controller-manager 1.24 (tests/differential, statefulset):
    # the first revision of this template, as kube-apiserver defaults it (securityContext {}
    # included), is named web-7f456b8b4 with collision count 0, web-7f456b8b5 with 1.
    data = template_patch(TEMPLATE)
    data["spec"]["template"]["spec"]["securityContext"] = {}
    revision = ControllerRevision(data=data)
    assert hash_controller_revision(revision, 0) == "7f456b8b4"
    assert hash_controller_revision(revision, 1) == "7f456b8b5"


def test_ephemeral_claim_templates_get_go_fields_too() -> None:
    volume = Volume(
        name="scratch",
        ephemeral=EphemeralVolumeSource(volume_claim_template=PersistentVolumeClaimTemplate()),
    )
    spec = PodSpec(containers=[Container(name="c")], init_containers=[Container(name="i")])
    data = template_patch(PodTemplateSpec(spec=PodSpec(**{**_fields(spec), "volumes": [volume]})))
    template = data["spec"]["template"]
    assert template["spec"]["initContainers"][0]["resources"] == {}
    claim = template["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]
    assert claim == {"metadata": {"creationTimestamp": None}, "spec": {"resources": {}}}


def test_no_template_is_the_empty_go_template() -> None:
    assert template_patch(None) == {
        "spec": {
            "template": {
                "$patch": "replace",
                "metadata": {"creationTimestamp": None},
                "spec": {"containers": None},
            }
        }
    }


def test_the_template_comes_back_from_the_data() -> None:
    back = template_from_patch(template_patch(TEMPLATE))
    assert back is not None
    assert back.spec is not None
    assert back.spec.containers
    assert back.spec.containers[0].image == "nginx:1.25"
    assert template_patch(back) == template_patch(TEMPLATE)  # a stable round trip
    assert template_from_patch({"spec": {}}) is None
    assert template_from_patch(None) is None


def _fields(spec: PodSpec) -> dict[str, object]:
    return {name: getattr(spec, name) for name in spec.__struct_fields__}
