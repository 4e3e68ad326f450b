"""python -m localvertex.admin: the admin service's command line (cli.py)."""

import sys

from localvertex.admin.cli import main

sys.exit(main())
