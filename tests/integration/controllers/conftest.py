"""Makes ``held_stream`` (shared by the controller integration tests) importable from each
test directory below this one (they import their own harness modules by plain name)."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
