"""The tray quick-ask popup."""
