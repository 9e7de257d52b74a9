"""tool_server.py behind lines of garbage on stdout (as a chatty server's banner would be)."""

import runpy
import sys
from pathlib import Path

print("Starting the server... this line is not JSON-RPC", flush=True)
print("{not json either", flush=True)
sys.argv = [sys.argv[0], "stdio"]
runpy.run_path(str(Path(__file__).with_name("tool_server.py")), run_name="__main__")
