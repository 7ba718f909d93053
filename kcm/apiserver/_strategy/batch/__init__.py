"""Strategies of the ``batch`` group (``pkg/registry/batch``)."""
