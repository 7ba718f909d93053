"""Informers: client-go's cache machinery on anyio.

Pipeline: :class:`Reflector` (LIST + WATCH) → :class:`DeltaFIFO` → :class:`Indexer` → one
buffered task per handler; :class:`Lister` reads the cache. :class:`SharedIndexInformer`
wires it together and :class:`SharedInformerFactory` shares one informer per kind, namespace
and selectors. See docs/informers.md.

Exported: what client-go's ``tools/cache`` exports for these pieces, plus the types their
signatures use. Keys are :class:`kcm.models.ObjectKey` (the default key function is
:func:`kcm.models.object_key`); the errors reported to the watch-error handler are in
:mod:`kcm.errors`.
"""

from ._backoff import Backoff as Backoff
from ._delta_fifo import Delta as Delta
from ._delta_fifo import DeltaFIFO as DeltaFIFO
from ._delta_fifo import DeltaType as DeltaType
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
from ._listers import Lister as Lister
from ._listers import NamespaceLister as NamespaceLister
from ._listers import Selector as Selector
from ._reflector import Reflector as Reflector
from ._reflector import default_watch_error_handler as default_watch_error_handler
from ._shared_informer import SharedIndexInformer as SharedIndexInformer
from ._shared_informer import wait_for_cache_sync as wait_for_cache_sync
from ._sharing import PartSharer as PartSharer
from ._sharing import compact as compact
from ._transforms import Transform as Transform
from ._transforms import strip_managed_fields as strip_managed_fields
from ._types import KubeObject as KubeObject
from ._types import ListerWatcher as ListerWatcher

__all__ = [
    "NAMESPACE_INDEX",
    "Backoff",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "HandlerRegistration",
    "IndexFunc",
    "Indexer",
    "InformerKey",
    "KeyFunc",
    "KubeObject",
    "Lister",
    "ListerWatcher",
    "NamespaceLister",
    "PartSharer",
    "Reflector",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "Selector",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "Transform",
    "compact",
    "default_watch_error_handler",
    "namespace_index_func",
    "strip_managed_fields",
    "wait_for_cache_sync",
]
