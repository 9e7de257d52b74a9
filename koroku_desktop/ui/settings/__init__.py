"""The settings dialog and the API-key widgets."""
