"""The chat window: conversation view, message rows, composer, first-start cards."""
