"""Strategies of the ``coordination.k8s.io`` group (``pkg/registry/coordination``)."""
