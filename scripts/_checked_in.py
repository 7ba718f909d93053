"""What every generator script does last: write its output, or with ``--check`` compare it with
the checked-in file and fail, naming the command that regenerates it."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(path: Path, text: str, *, check: bool, regenerate: str) -> int:
    """Write ``text`` to ``path`` (0); with ``check``, 0 when the file holds ``text`` already,
    else 1 and a line on stderr saying to run ``regenerate``."""
    if check:
        if not path.exists() or path.read_text() != text:
            print(f"{path} is out of date: run {regenerate}", file=sys.stderr)
            return 1
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return 0
