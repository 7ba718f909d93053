"""Strategies of the ``apps`` group (``pkg/registry/apps``)."""
