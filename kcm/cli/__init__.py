"""The ``kcm`` command line: argument parsing and wiring only, no business logic."""

from ._main import main as main

__all__ = ["main"]
