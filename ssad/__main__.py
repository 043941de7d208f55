"""`python -m ssad` is the `ssad` command."""

import sys

from .cli import main

sys.exit(main())
