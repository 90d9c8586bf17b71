"""`python -m tvr` runs the `tvr` command."""

import sys

from tvr.cli import main

sys.exit(main())
