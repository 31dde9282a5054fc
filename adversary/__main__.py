"""``python -m adversary``: the same as the ``adversary`` command."""

import sys

from .cli import main

sys.exit(main())
