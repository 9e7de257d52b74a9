"""The painter of each kind of chat row: the one table `MessageDelegate` dispatches on."""

from __future__ import annotations

from koroku_desktop.ui.chat.attachment_rows import AttachmentPainter
from koroku_desktop.ui.chat.card_painters import CompactionPainter, DividerPainter, ToolPainter
from koroku_desktop.ui.chat.items import ItemKind
from koroku_desktop.ui.chat.remembered_painter import RememberedPainter
from koroku_desktop.ui.chat.row_painting import RowPainter
from koroku_desktop.ui.chat.sources import SourcesPainter
from koroku_desktop.ui.chat.text_painters import ModelPainter, ThoughtPainter, UserPainter
from koroku_desktop.ui.chat.turn_rows import StatusPainter, TurnNoticePainter

PAINTERS: dict[ItemKind, RowPainter] = {
    "user": UserPainter(),
    "model": ModelPainter(),
    "thought": ThoughtPainter(),
    "tool": ToolPainter(),
    "compaction": CompactionPainter(),
    "cleared": DividerPainter("muted"),
    "notice": DividerPainter("danger"),
    "status": StatusPainter(),
    "turn_notice": TurnNoticePainter(),
    "remembered": RememberedPainter(),
    "sources": SourcesPainter(),
    "attachment": AttachmentPainter(),
}
