"""``python -m kcm.examples.greeting``."""

from .main import main

raise SystemExit(main())
