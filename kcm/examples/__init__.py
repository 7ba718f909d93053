"""Examples that ship with kcm, runnable from an installed package.

* ``python -m kcm.examples.greeting``: the tutorial's controller (docs/tutorial/): a
  ``Greeting`` custom resource whose controller writes a ConfigMap with the greeting and
  reports it in the status; ``--once`` runs it on the embedded API server and exits,
  ``manifests`` prints the YAML that deploys it to a cluster.
* ``python -m kcm.examples.connect``: the tutorial's first step, the client against the
  embedded API server.

``examples/configmapset`` in the source tree is a larger operator (a finalizer, objects across
namespaces, events); it is not installed.
"""

__all__: list[str] = []
