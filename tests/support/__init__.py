"""The test suite's own pytest plugin (loaded by tests/conftest.py through `pytest_plugins`).

- `builders`: the events most tests need (`user`, `model`, `said`).
- `waits`: `wait_until` (threads, subprocesses), `async_wait_until` (asyncio) and `settle`
  (drain the Qt and asyncio queues).
- `gemini`: one fake Gemini server per session (per xdist worker), reset before each test.
- `processes`: `Koroku`, the real `koroku` command in a subprocess, and its fixture.
- `postgres`: one PostgreSQL cluster per session, a fresh database per test; every test that
  uses it runs in the one `postgres` xdist group.
- `dbus`: a private D-Bus session bus per test and the fake notification service on it.
"""
