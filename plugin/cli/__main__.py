"""`python -m trainbench.cli ...`, the same as the `trainbench` command."""

import sys

from . import main

sys.exit(main())
