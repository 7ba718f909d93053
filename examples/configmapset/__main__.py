"""``python -m examples.configmapset``."""

from .main import main

raise SystemExit(main())
