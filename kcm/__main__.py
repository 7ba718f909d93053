"""``python -m kcm`` runs the ``kcm`` command."""

import sys

from .cli import main

sys.exit(main())
