"""Strategies of the core group (``pkg/registry/core``) and the pod spec they share."""
