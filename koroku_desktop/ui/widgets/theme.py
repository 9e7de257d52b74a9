"""Light and dark palettes, and the style sheet filled with the chosen one."""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication


@dataclass(frozen=True)
class Theme:
    """The colours every widget and the delegate paint with."""

    dark: bool
    window: str
    surface: str
    hover: str
    border: str
    text: str
    muted: str
    accent: str
    accent_hover: str
    accent_soft: str
    on_accent: str
    user_bubble: str
    user_text: str
    code_bg: str
    danger: str
    success: str
    warn: str
    warn_soft: str
    mono: str = "monospace"

    def color(self, name: str) -> QColor:
        """A palette entry as a QColor."""
        return QColor(str(getattr(self, name)))


LIGHT = Theme(
    dark=False,
    window="#F7F7FA",
    surface="#FFFFFF",
    hover="#ECECF2",
    border="#DCDCE4",
    text="#1C1C28",
    muted="#6B6B7B",
    accent="#4F46E5",
    accent_hover="#4338CA",
    accent_soft="#E4E3FB",
    on_accent="#FFFFFF",
    user_bubble="#4F46E5",
    user_text="#FFFFFF",
    code_bg="#F0F0F5",
    danger="#DC2626",
    success="#16A34A",
    warn="#F59E0B",
    warn_soft="#FFF8EB",
)

DARK = Theme(
    dark=True,
    window="#17171C",
    surface="#222229",
    hover="#2C2C35",
    border="#383842",
    text="#E8E8EF",
    muted="#9A9AAB",
    accent="#818CF8",
    accent_hover="#A5B4FC",
    accent_soft="#2E2E52",
    on_accent="#0F0F1A",
    user_bubble="#3F3A9E",
    user_text="#F2F2FF",
    code_bg="#1C1C23",
    danger="#F87171",
    success="#4ADE80",
    warn="#FBBF24",
    warn_soft="#2A2418",
)

_current: Theme = LIGHT


def current() -> Theme:
    """The theme in use."""
    return _current


def system_is_dark() -> bool:
    """Whether the desktop asks for a dark colour scheme."""
    hints = QGuiApplication.styleHints()
    return bool(hints.colorScheme() == Qt.ColorScheme.Dark)


def choose(preference: str) -> Theme:
    """The theme for a settings value: system, light or dark."""
    if preference == "dark":
        return DARK
    if preference == "light":
        return LIGHT
    return DARK if system_is_dark() else LIGHT


def style_sheet(theme: Theme) -> str:
    """resources/style.qss with its @tokens replaced by the theme's colours."""
    text = importlib.resources.files("resources").joinpath("style.qss").read_text("utf-8")
    tokens = sorted(vars(theme).items(), key=lambda kv: -len(kv[0]))
    for name, value in tokens:
        text = text.replace(f"@{name}", str(value))
    return text


def apply(app: QApplication, preference: str = "system") -> Theme:
    """Apply Fusion, a matching QPalette and the style sheet; remember the theme."""
    global _current
    theme = choose(preference)
    mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
    theme = Theme(**{**vars(theme), "mono": mono or "monospace"})
    _current = theme
    app.setStyle("Fusion")
    pal = QPalette()
    pal.setColor(QPalette.ColorRole.Window, theme.color("window"))
    pal.setColor(QPalette.ColorRole.Base, theme.color("surface"))
    pal.setColor(QPalette.ColorRole.AlternateBase, theme.color("hover"))
    pal.setColor(QPalette.ColorRole.Text, theme.color("text"))
    pal.setColor(QPalette.ColorRole.WindowText, theme.color("text"))
    pal.setColor(QPalette.ColorRole.Button, theme.color("surface"))
    pal.setColor(QPalette.ColorRole.ButtonText, theme.color("text"))
    pal.setColor(QPalette.ColorRole.Highlight, theme.color("accent"))
    pal.setColor(QPalette.ColorRole.HighlightedText, theme.color("on_accent"))
    pal.setColor(QPalette.ColorRole.PlaceholderText, theme.color("muted"))
    pal.setColor(QPalette.ColorRole.ToolTipBase, theme.color("surface"))
    pal.setColor(QPalette.ColorRole.ToolTipText, theme.color("text"))
    pal.setColor(QPalette.ColorRole.Link, theme.color("accent"))
    app.setPalette(pal)
    app.setStyleSheet(style_sheet(theme))
    return theme
