"""A "browser" for the OAuth tests: `python fake_browser.py URL` follows the authorization
page's redirect to Koroku's loopback address, as a person's browser would after they approve.

`FAKE_BROWSER_LOG`: each visit is appended there (URL opened, final page). With
`FAKE_BROWSER_CLOSE=1` it opens nothing: the person closed the window.
"""

from __future__ import annotations

import os
import sys
import urllib.request


def main(url: str) -> None:
    log = os.environ.get("FAKE_BROWSER_LOG")
    page = "(closed)"
    if not os.environ.get("FAKE_BROWSER_CLOSE"):
        with urllib.request.urlopen(url, timeout=30) as response:  # follows the 302
            page = response.read().decode()
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{url}\n{page}\n")


if __name__ == "__main__":
    main(sys.argv[1])
