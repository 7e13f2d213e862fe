"""``python -m langmem_layers.bench NAME``."""

import sys

from langmem_layers.bench import main

sys.exit(main())
