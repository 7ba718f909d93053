"""Pod events become PodDisruptionBudget keys (Go's ``addPod``/``updatePod``/``deletePod``
with ``getPdbForPod``).

A pod concerns the first budget in its namespace whose selector matches it (an empty
selector matches every pod, a missing one none); a pod several budgets select gets a
``MultiplePodDisruptionBudgets`` warning each time, as in Go, and only the first budget (by
name: Go's choice is arbitrary) is synced. Synchronous and cheap: these run on the informer's
notification path.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import final

from kcm.informers import Lister
from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import Pod
from kcm.models.policy_v1 import PodDisruptionBudget
from kcm.record import EventRecorder
from kcm.selectors import LabelSelector, SelectorParseError

__all__ = ["PodEvents", "budgets_for_pod"]

logger = logging.getLogger(__name__)


def budgets_for_pod(budgets: Lister[PodDisruptionBudget], pod: Pod) -> list[PodDisruptionBudget]:
    """The budgets of the pod's namespace that select it, by name
    (``GetPodPodDisruptionBudgets``; budgets with an invalid selector are skipped)."""
    found = []
    for pdb in budgets.namespace(pod.metadata.namespace or "").list():
        try:
            selector = LabelSelector.from_model(pdb.spec.selector if pdb.spec else None)
        except SelectorParseError:
            continue
        if selector.matches(pod.metadata.labels):
            found.append(pdb)
    return sorted(found, key=lambda p: p.metadata.name or "")


@final
class PodEvents:
    """The budget key a pod event concerns.

    Args:
        budgets: the PodDisruptionBudget lister.
        recorder: where the ``MultiplePodDisruptionBudgets`` warning goes (on the pod).
    """

    def __init__(self, budgets: Lister[PodDisruptionBudget], recorder: EventRecorder) -> None:
        self._budgets = budgets
        self._recorder = recorder

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return self._keys(obj)

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        if old.metadata.resource_version == new.metadata.resource_version:
            return ()  # a resync
        return self._keys(new)

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return self._keys(obj)

    def _keys(self, pod: Pod) -> tuple[ObjectKey, ...]:
        budgets = budgets_for_pod(self._budgets, pod)
        if not budgets:
            return ()
        chosen = budgets[0]
        if len(budgets) > 1:
            message = (
                f'Pod "{pod.metadata.namespace}"/"{pod.metadata.name}" matches multiple '
                f'PodDisruptionBudgets.  Chose "{chosen.metadata.name}" arbitrarily.'
            )
            logger.warning(message)
            self._recorder.event(pod, "Warning", "MultiplePodDisruptionBudgets", message)
        return (object_key(chosen),)
