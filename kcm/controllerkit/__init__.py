"""The controller kit: what kube-controller-manager's controllers share."""

from ._controller_ref_manager import ControllerRefManager as ControllerRefManager
from ._controller_ref_manager import LabelMatcher as LabelMatcher
from ._controller_ref_manager import recheck_deletion_timestamp as recheck_deletion_timestamp
from ._expectations import EXPECTATIONS_TIMEOUT as EXPECTATIONS_TIMEOUT
from ._expectations import ControllerExpectations as ControllerExpectations
from ._expectations import UIDTrackingControllerExpectations as UIDTrackingControllerExpectations

__all__ = [
    "EXPECTATIONS_TIMEOUT",
    "ControllerExpectations",
    "ControllerRefManager",
    "LabelMatcher",
    "UIDTrackingControllerExpectations",
    "recheck_deletion_timestamp",
]
