"""Strategies of the ``discovery.k8s.io`` group (``pkg/registry/discovery``)."""
