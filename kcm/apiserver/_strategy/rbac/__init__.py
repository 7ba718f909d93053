"""Strategies of the ``rbac.authorization.k8s.io`` group (``pkg/registry/rbac``)."""
