"""Strategies of the ``scheduling.k8s.io`` group (``pkg/registry/scheduling``)."""
