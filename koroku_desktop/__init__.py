"""Koroku Desktop: a tray assistant with total recall, built on Google Gemini."""

__version__ = "0.1.0"
