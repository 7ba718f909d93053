"""Strategies of the ``apiextensions.k8s.io`` group (apiextensions-apiserver's registry)."""
