"""Static resources (icons, style sheet), loaded with importlib.resources."""
