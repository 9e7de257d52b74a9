"""How the chat shows passages Koroku remembered with a user turn: one small line of chips."""

from __future__ import annotations

from koroku_desktop.domain.remembered import Remembered

CHIP_CHARS = 48


def remembered_chips(passages: tuple[Remembered, ...]) -> str:
    """ "Remembered: ⟨#12 my car is painted crimson⟩ ⟨#40 …⟩" — one chip per passage."""
    chips = []
    for p in passages:
        text = " ".join(p.text.split())
        short = text if len(text) <= CHIP_CHARS else text[: CHIP_CHARS - 1] + "…"
        chips.append(f"⟨#{p.seq} {short}⟩")
    return "Remembered: " + " ".join(chips)


def remembered_details(passages: tuple[Remembered, ...]) -> str:
    """The passages in full (the row's tooltip): where each comes from, and what it says."""
    return "\n\n".join(f"#{p.seq} · {p.when} · {p.who}\n{p.text}" for p in passages)
