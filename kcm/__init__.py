"""kcm: Python's client-go plus controller-runtime.

The packages form layers whose imports point down only; the rule is the import-linter
contracts in ``pyproject.toml``, rendered in ``docs/architecture.md``.

Codes in parentheses in comments and docstrings, such as ``(R17)`` or ``(§8)``, cite numbered
behaviours of the Go originals; ``docs/behaviours.md`` explains each.
"""

from ._version import __version__ as __version__

__all__ = ["__version__"]
