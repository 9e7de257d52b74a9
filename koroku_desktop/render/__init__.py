"""The one presentation fold: log entries and parts -> a few neutral blocks (no Qt, no I/O).

`fold` turns what the log holds into blocks; every front end and text surface (chat rows,
quick-ask, viewer, terminal, Markdown export, search text, the summariser's transcript) only
formats blocks. A new part or event kind is added here once, and type checking points at
every renderer that does not handle its block yet.
"""
