"""The Job controller: runs a Job's pods to completion (kube-controller-manager's ``job``).

Parallelism and completions, NonIndexed and Indexed completion modes, finalizer-based pod
tracking through ``status.uncountedTerminatedPods``, ``backoffLimit`` with an exponential
pod-recreate backoff, ``activeDeadlineSeconds``, suspend/resume, the basics of
``podFailurePolicy``, and the ``Complete``/``Failed`` conditions (with the interim
``SuccessCriteriaMet``/``FailureTarget``). See docs/controllers.md.
"""

from ._controller import DEFAULT_BACKOFF as DEFAULT_BACKOFF
from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import HELP as HELP
from ._controller import MAX_BACKOFF as MAX_BACKOFF
from ._controller import NAME as NAME
from ._controller import JobController as JobController
from ._controller import add_to_manager as add_to_manager
from ._indexes import format_indexes as format_indexes
from ._indexes import parse_indexes as parse_indexes
from ._pods import COMPLETION_INDEX_KEY as COMPLETION_INDEX_KEY
from ._pods import JOB_TRACKING_FINALIZER as JOB_TRACKING_FINALIZER
from ._sync import MAX_POD_CREATE_DELETE_PER_SYNC as MAX_POD_CREATE_DELETE_PER_SYNC
from ._sync import MAX_UNCOUNTED_PODS as MAX_UNCOUNTED_PODS

__all__ = [
    "COMPLETION_INDEX_KEY",
    "DEFAULT_BACKOFF",
    "DEFAULT_WORKERS",
    "HELP",
    "JOB_TRACKING_FINALIZER",
    "MAX_BACKOFF",
    "MAX_POD_CREATE_DELETE_PER_SYNC",
    "MAX_UNCOUNTED_PODS",
    "NAME",
    "JobController",
    "add_to_manager",
    "format_indexes",
    "parse_indexes",
]
