"""The Tasks page: scheduled tasks listed, made, edited, paused, run and deleted."""
