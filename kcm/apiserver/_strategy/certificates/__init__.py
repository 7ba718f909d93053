"""Strategies of the ``certificates.k8s.io`` group (``pkg/registry/certificates``)."""
