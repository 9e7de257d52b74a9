"""The frozen app's entry point: what the `koroku` console script runs."""

import sys

from koroku_desktop.launcher import main

if __name__ == "__main__":
    sys.exit(main())
