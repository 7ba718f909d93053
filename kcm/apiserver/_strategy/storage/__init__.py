"""Strategies of the ``storage.k8s.io`` kinds."""
