"""Strategies of the ``storage.k8s.io`` group (``pkg/registry/storage``)."""
