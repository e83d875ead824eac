"""`python -m verifier_tui` is the same as the `verifier-tui` command."""

import sys

from verifier_tui.cli import main

sys.exit(main())
