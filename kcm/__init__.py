"""kcm: Python's client-go plus controller-runtime.

Layers (imports point down only)::

    cli > controllers > controllerkit > runtime
        > {informers, workqueue, leaderelection, record} > client > {models, selectors}
        > {errors, clock}

The built-in controllers (``kcm.controllers.<name>``) never import each other: what they share
is in ``kcm.controllerkit``.

``kcm.apiserver`` (the embedded Kubernetes-compatible API server) and ``kcm.testing`` sit
beside the library; nothing in the library imports them.

Codes in parentheses in comments and docstrings, such as ``(R17)`` or ``(§8)``, cite numbered
behaviours of the Go originals; ``docs/behaviours.md`` explains each.
"""

from ._version import __version__ as __version__

__all__ = ["__version__"]
