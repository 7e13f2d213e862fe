"""``python -m bench NAME``."""

import sys

from bench import main

sys.exit(main())
