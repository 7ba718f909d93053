"""Helpers shared by several test directories (importable as ``tests.helpers``)."""
