"""The suite's plugin (tests/support) does the shared work: isolation, fakes, waits, builders.

Fixtures are shared through the plugin, never by importing another folder's conftest.
"""

from __future__ import annotations

pytest_plugins = [
    "tests.support.isolation",
    "tests.support.gemini",
    "tests.support.processes",
    "tests.support.postgres",
    "tests.support.keyring_memory",
    "tests.support.keyring_file",
    "tests.support.dbus",
    "tests.support.qt_windows",
    "tests.support.reruns",
]
