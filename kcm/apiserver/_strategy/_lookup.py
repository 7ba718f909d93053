"""Which strategy a resource has: one line per kind with rules of its own."""

from __future__ import annotations

from .._registry import Resource
from ._base import GenerationalStrategy, Strategy
from .apiextensions.customresourcedefinitions import CustomResourceDefinitionStrategy
from .apps.daemonsets import DaemonSetStrategy
from .apps.deployments import DeploymentStrategy
from .apps.replicasets import ReplicaSetStrategy
from .apps.statefulsets import StatefulSetStrategy
from .authentication.tokenreviews import TokenReviewStrategy
from .authorization.reviews import AccessReviewStrategy
from .authorization.rulesreviews import RulesReviewStrategy
from .autoscaling.horizontalpodautoscalers import HorizontalPodAutoscalerStrategy
from .batch.cronjobs import CronJobStrategy
from .batch.jobs import JobStrategy
from .certificates.certificatesigningrequests import CertificateSigningRequestStrategy
from .coordination.leases import LeaseStrategy
from .core.claims import PersistentVolumeClaimStrategy
from .core.configmaps import ConfigMapStrategy
from .core.limitranges import LimitRangeStrategy
from .core.namespaces import NamespaceStrategy
from .core.nodes import NodeStrategy
from .core.persistentvolumes import PersistentVolumeStrategy
from .core.pods import PodStrategy
from .core.podtemplates import PodTemplateStrategy
from .core.replicationcontrollers import ReplicationControllerStrategy
from .core.resourcequotas import ResourceQuotaStrategy
from .core.secrets import SecretStrategy
from .core.serviceaccounts import ServiceAccountStrategy
from .core.services import ServiceStrategy
from .customresources import CustomResourceStrategy
from .discovery.endpointslices import EndpointSliceStrategy
from .rbac.roles import RbacStrategy
from .scheduling.priorityclasses import PriorityClassStrategy
from .storage.storageclasses import StorageClassStrategy
from .storage.volumeattachments import VolumeAttachmentStrategy

__all__ = ["strategy_for"]

# (group, kind) -> strategy; every other built-in kind gets the base Strategy.
_STRATEGIES: dict[tuple[str, str], type[Strategy]] = {
    ("", "ConfigMap"): ConfigMapStrategy,
    ("autoscaling", "HorizontalPodAutoscaler"): HorizontalPodAutoscalerStrategy,
    ("", "LimitRange"): LimitRangeStrategy,
    ("", "Namespace"): NamespaceStrategy,
    ("", "Node"): NodeStrategy,
    ("", "PersistentVolume"): PersistentVolumeStrategy,
    ("", "PersistentVolumeClaim"): PersistentVolumeClaimStrategy,
    ("", "Pod"): PodStrategy,
    ("", "PodTemplate"): PodTemplateStrategy,
    ("", "ReplicationController"): ReplicationControllerStrategy,
    ("", "ResourceQuota"): ResourceQuotaStrategy,
    ("", "Secret"): SecretStrategy,
    ("", "Service"): ServiceStrategy,
    ("", "ServiceAccount"): ServiceAccountStrategy,
    ("apps", "DaemonSet"): DaemonSetStrategy,
    ("apps", "Deployment"): DeploymentStrategy,
    ("apps", "ReplicaSet"): ReplicaSetStrategy,
    ("apps", "StatefulSet"): StatefulSetStrategy,
    ("authentication.k8s.io", "TokenReview"): TokenReviewStrategy,
    ("authorization.k8s.io", "LocalSubjectAccessReview"): AccessReviewStrategy,
    ("authorization.k8s.io", "SelfSubjectAccessReview"): AccessReviewStrategy,
    ("authorization.k8s.io", "SelfSubjectRulesReview"): RulesReviewStrategy,
    ("authorization.k8s.io", "SubjectAccessReview"): AccessReviewStrategy,
    ("batch", "CronJob"): CronJobStrategy,
    ("batch", "Job"): JobStrategy,
    ("certificates.k8s.io", "CertificateSigningRequest"): CertificateSigningRequestStrategy,
    ("coordination.k8s.io", "Lease"): LeaseStrategy,
    ("discovery.k8s.io", "EndpointSlice"): EndpointSliceStrategy,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): CustomResourceDefinitionStrategy,
    ("rbac.authorization.k8s.io", "ClusterRole"): RbacStrategy,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): RbacStrategy,
    ("rbac.authorization.k8s.io", "Role"): RbacStrategy,
    ("rbac.authorization.k8s.io", "RoleBinding"): RbacStrategy,
    ("scheduling.k8s.io", "PriorityClass"): PriorityClassStrategy,
    ("storage.k8s.io", "StorageClass"): StorageClassStrategy,
    ("storage.k8s.io", "VolumeAttachment"): VolumeAttachmentStrategy,
    # kinds whose only rule of their own is that the server keeps metadata.generation
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): GenerationalStrategy,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): GenerationalStrategy,
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): GenerationalStrategy,
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): GenerationalStrategy,
    ("networking.k8s.io", "Ingress"): GenerationalStrategy,
    ("networking.k8s.io", "IngressClass"): GenerationalStrategy,
    ("networking.k8s.io", "NetworkPolicy"): GenerationalStrategy,
    ("policy", "PodDisruptionBudget"): GenerationalStrategy,
}


def strategy_for(resource: Resource) -> Strategy:
    """The rules of ``resource``'s kind (custom resources: their CRD version's)."""
    if resource.crd is not None:
        return CustomResourceStrategy(resource)
    return _STRATEGIES.get((resource.group, resource.kind), Strategy)(resource)
