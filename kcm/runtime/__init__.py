"""The controller runtime: reconcilers, controllers, event handlers, predicates, a builder.

Pipeline stage 7 (controller-runtime on anyio): informer events become keys (handlers and
predicates), keys go into a rate-limited work queue, and N workers call
``Reconciler.reconcile(key)``; the outcome (a :class:`Result` or an exception) decides whether
and when the key comes back. See docs/runtime.md.
"""

from ._builder import ControllerBuilder as ControllerBuilder
from ._builder import controller_for as controller_for
from ._controller import Controller as Controller
from ._delegated_auth import DelegatedAuth as DelegatedAuth
from ._failures import error_line as error_line
from ._failures import is_expected_failure as is_expected_failure
from ._finalizers import add_finalizer as add_finalizer
from ._finalizers import has_finalizer as has_finalizer
from ._finalizers import remove_finalizer as remove_finalizer
from ._handlers import EnqueueForObject as EnqueueForObject
from ._handlers import EnqueueForOwner as EnqueueForOwner
from ._handlers import EnqueueMapped as EnqueueMapped
from ._handlers import EventHandler as EventHandler
from ._handlers import QueueingHandler as QueueingHandler
from ._handlers import enqueue_mapped as enqueue_mapped
from ._handlers import enqueue_object as enqueue_object
from ._handlers import enqueue_owner as enqueue_owner
from ._health_server import HealthCheck as HealthCheck
from ._health_server import ServingOptions as ServingOptions
from ._manager import LeaderElectionOptions as LeaderElectionOptions
from ._manager import Manager as Manager
from ._manager import Runnable as Runnable
from ._manager import run_until_signal as run_until_signal
from ._metrics import RECONCILE_TIME_BUCKETS as RECONCILE_TIME_BUCKETS
from ._owner_refs import get_controller_of as get_controller_of
from ._owner_refs import new_controller_ref as new_controller_ref
from ._owner_refs import set_controller_reference as set_controller_reference
from ._owner_refs import set_owner_reference as set_owner_reference
from ._predicates import Predicate as Predicate
from ._predicates import PredicateFuncs as PredicateFuncs
from ._predicates import and_ as and_
from ._predicates import annotations_changed as annotations_changed
from ._predicates import generation_changed as generation_changed
from ._predicates import label_selector as label_selector
from ._predicates import labels_changed as labels_changed
from ._predicates import not_ as not_
from ._predicates import or_ as or_
from ._predicates import predicate as predicate
from ._predicates import resource_version_changed as resource_version_changed
from ._predicates import spec_or_deletion_changed as spec_or_deletion_changed
from ._reconcile_tracing import trace_reconciles as trace_reconciles
from ._reconciler import ReconcileContext as ReconcileContext
from ._reconciler import ReconcileFunc as ReconcileFunc
from ._reconciler import Reconciler as Reconciler
from ._reconciler import Request as Request
from ._reconciler import Result as Result
from ._reconciler import TerminalError as TerminalError
from ._reconciler import current_reconcile as current_reconcile
from ._reconciler import is_terminal as is_terminal
from ._serving_tls import ask_for_client_certificates as ask_for_client_certificates
from ._serving_tls import self_signed_context as self_signed_context
from ._serving_tls import serving_context as serving_context
from ._shutdown import graceful_shield as graceful_shield
from ._types import HasMetadata as HasMetadata
from ._x509_auth import ClientCertAuthenticator as ClientCertAuthenticator
from ._x509_auth import FrontProxyAuthenticator as FrontProxyAuthenticator
from ._x509_auth import load_ca_bundle as load_ca_bundle

__all__ = [
    "RECONCILE_TIME_BUCKETS",
    "ClientCertAuthenticator",
    "Controller",
    "ControllerBuilder",
    "DelegatedAuth",
    "EnqueueForObject",
    "EnqueueForOwner",
    "EnqueueMapped",
    "EventHandler",
    "FrontProxyAuthenticator",
    "HasMetadata",
    "HealthCheck",
    "LeaderElectionOptions",
    "Manager",
    "Predicate",
    "PredicateFuncs",
    "QueueingHandler",
    "ReconcileContext",
    "ReconcileFunc",
    "Reconciler",
    "Request",
    "Result",
    "Runnable",
    "ServingOptions",
    "TerminalError",
    "add_finalizer",
    "and_",
    "annotations_changed",
    "ask_for_client_certificates",
    "controller_for",
    "current_reconcile",
    "enqueue_mapped",
    "enqueue_object",
    "enqueue_owner",
    "error_line",
    "generation_changed",
    "get_controller_of",
    "graceful_shield",
    "has_finalizer",
    "is_expected_failure",
    "is_terminal",
    "label_selector",
    "labels_changed",
    "load_ca_bundle",
    "new_controller_ref",
    "not_",
    "or_",
    "predicate",
    "remove_finalizer",
    "resource_version_changed",
    "run_until_signal",
    "self_signed_context",
    "serving_context",
    "set_controller_reference",
    "set_owner_reference",
    "spec_or_deletion_changed",
    "trace_reconciles",
]
