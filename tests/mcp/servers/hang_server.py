"""An MCP "server" that reads its stdin and never answers anything."""

import sys

for _line in sys.stdin:
    pass
