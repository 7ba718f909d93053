"""The Deployments the controller benchmarks create (``controllers_scale.py``,
``controllers_vs_go.py``): one nginx container, labels of their own."""

from __future__ import annotations

from kcm.models.apps_v1 import Deployment, DeploymentSpec
from kcm.models.core_v1 import Container, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector, ObjectMeta

__all__ = ["bench_deployment"]


def bench_deployment(i: int, namespace: str, replicas: int) -> Deployment:
    """Deployment ``app-<i>`` in ``namespace`` selecting ``app: app-<i>``."""
    labels = {"app": f"app-{i}"}
    return Deployment(
        metadata=ObjectMeta(name=f"app-{i}", namespace=namespace),
        spec=DeploymentSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name="app", image="nginx:1.27")]),
            ),
        ),
    )
