"""SVG icons of the app and the tray states."""
