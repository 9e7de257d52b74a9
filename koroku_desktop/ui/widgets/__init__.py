"""Widgets shared by several windows: theme, icons, input, approval cards."""
