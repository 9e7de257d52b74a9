"""`python -m koroku_desktop` does what `koroku` does."""

import sys

from koroku_desktop.launcher import main

sys.exit(main())
