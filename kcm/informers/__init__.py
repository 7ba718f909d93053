"""Informers: client-go's cache machinery on anyio.

Pipeline: :class:`Reflector` (LIST + WATCH) → :class:`DeltaFIFO` → :class:`Indexer` → one
buffered task per handler; :class:`Lister` reads the cache. :class:`SharedIndexInformer`
wires it together and :class:`SharedInformerFactory` shares one informer per kind, namespace
and selectors. See docs/informers.md.
"""

from kcm.errors import VeryShortWatchError as VeryShortWatchError
from kcm.errors import WatchListTimeoutError as WatchListTimeoutError

from ._backoff import Backoff as Backoff
from ._delta_fifo import Delta as Delta
from ._delta_fifo import DeltaFIFO as DeltaFIFO
from ._delta_fifo import DeltaType as DeltaType
from ._delta_fifo import KnownObjects as KnownObjects
from ._factory import InformerKey as InformerKey
from ._factory import SharedInformerFactory as SharedInformerFactory
from ._handlers import HandlerRegistration as HandlerRegistration
from ._handlers import ResourceEventHandler as ResourceEventHandler
from ._handlers import ResourceEventHandlerFuncs as ResourceEventHandlerFuncs
from ._indexer import NAMESPACE_INDEX as NAMESPACE_INDEX
from ._indexer import Indexer as Indexer
from ._indexer import IndexFunc as IndexFunc
from ._indexer import namespace_index_func as namespace_index_func
from ._keys import KeyFunc as KeyFunc
from ._keys import ObjectKey as ObjectKey
from ._keys import meta_namespace_key as meta_namespace_key
from ._listers import Lister as Lister
from ._listers import NamespaceLister as NamespaceLister
from ._listers import Selector as Selector
from ._reflector import INITIAL_EVENTS_END_ANNOTATION as INITIAL_EVENTS_END_ANNOTATION
from ._reflector import WATCH_OUTCOME_ACTIONS as WATCH_OUTCOME_ACTIONS
from ._reflector import Reflector as Reflector
from ._reflector import ReflectorStore as ReflectorStore
from ._reflector import WatchAction as WatchAction
from ._reflector import WatchOutcome as WatchOutcome
from ._reflector import classify_watch_end as classify_watch_end
from ._reflector import default_watch_error_handler as default_watch_error_handler
from ._shared_informer import MINIMUM_RESYNC_PERIOD as MINIMUM_RESYNC_PERIOD
from ._shared_informer import SharedIndexInformer as SharedIndexInformer
from ._shared_informer import wait_for_cache_sync as wait_for_cache_sync
from ._sharing import PartSharer as PartSharer
from ._sharing import compact as compact
from ._transforms import Transform as Transform
from ._transforms import strip_managed_fields as strip_managed_fields
from ._types import KubeObject as KubeObject
from ._types import ListerWatcher as ListerWatcher
from ._types import ListMetaLike as ListMetaLike
from ._types import ObjectListLike as ObjectListLike
from ._types import ObjectMetaLike as ObjectMetaLike
from ._types import WatchEventLike as WatchEventLike

__all__ = [  # noqa: RUF022 (plain sorted order, checked by tests/test_public_api.py)
    "Backoff",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "HandlerRegistration",
    "INITIAL_EVENTS_END_ANNOTATION",
    "IndexFunc",
    "Indexer",
    "InformerKey",
    "KeyFunc",
    "KnownObjects",
    "KubeObject",
    "ListMetaLike",
    "Lister",
    "ListerWatcher",
    "MINIMUM_RESYNC_PERIOD",
    "NAMESPACE_INDEX",
    "NamespaceLister",
    "ObjectKey",
    "ObjectListLike",
    "ObjectMetaLike",
    "PartSharer",
    "Reflector",
    "ReflectorStore",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "Selector",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "Transform",
    "VeryShortWatchError",
    "WATCH_OUTCOME_ACTIONS",
    "WatchAction",
    "WatchEventLike",
    "WatchListTimeoutError",
    "WatchOutcome",
    "classify_watch_end",
    "compact",
    "default_watch_error_handler",
    "meta_namespace_key",
    "namespace_index_func",
    "strip_managed_fields",
    "wait_for_cache_sync",
]
