"""`python -m memstrata_bench ...`: the same as the `memstrata-bench` command."""

import sys

from .cli import main

sys.exit(main())
