"""``python -m adversary.cli``: the same as the ``adversary`` command."""

import sys

from . import main

sys.exit(main())
