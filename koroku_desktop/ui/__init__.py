"""The PySide6 + qasync desktop front end: the only package that imports Qt."""
