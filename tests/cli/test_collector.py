"""`koroku ask` pauses the cyclic collector until its first reply (cli/collector.py)."""

from __future__ import annotations

import gc

import pytest

from koroku_desktop.cli import collector


def test_the_collector_runs_again_after_the_command_whatever_happened() -> None:
    assert gc.isenabled()

    def failing_command() -> None:
        assert not gc.isenabled()
        raise KeyError("the command failed")

    with pytest.raises(KeyError), collector.paused(True):
        failing_command()
    assert gc.isenabled()
    with collector.paused(False):
        assert gc.isenabled()


def test_the_first_reply_freezes_what_start_up_made_and_resumes_the_collector() -> None:
    try:
        with collector.paused(True):
            collector.resume_frozen()
            assert gc.isenabled() and gc.get_freeze_count() > 0
            collector.resume_frozen()  # a second reply changes nothing
        assert gc.isenabled()
    finally:
        gc.unfreeze()  # this test's process goes on
    collector.resume_frozen()  # not paused: nothing happens
    assert gc.get_freeze_count() == 0
