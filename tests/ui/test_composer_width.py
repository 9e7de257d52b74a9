"""The composer at every width: the message box keeps room to type in, and the model picker
is either shown whole or left to the status bar (the sidebar can leave a wide window's
composer narrow)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.composer import MIN_INPUT_WIDTH
from tests.support.waits import settle


def test_the_message_box_keeps_its_room_beside_the_sidebar_and_a_running_turn(
    desktop: Desktop, qtbot: QtBot
) -> None:
    window = desktop.window
    composer = window.composer
    composer.stop_button.show()  # as while a turn runs: Stop beside Send
    for width, sidebar, picker in (
        (1600, True, True),
        (900, True, True),
        (700, True, False),
        (700, False, True),
        (640, True, True),
        (599, False, False),  # a narrow window: the status bar names the model
        (420, True, False),
    ):
        window.nav.set_wanted(sidebar)
        window.resize(width, 760)
        settle()
        assert window.width() == width
        settle()
        where = f"{width} px, sidebar {'on' if sidebar else 'off'}"
        assert composer.input.width() >= MIN_INPUT_WIDTH - 20, where
        assert composer.model_picker.isVisible() == picker, where
        if picker:
            hint = composer.model_picker.sizeHint().width()
            assert composer.model_picker.width() >= hint, where
