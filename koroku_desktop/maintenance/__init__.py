"""Keeping a data dir well: doctor, export/import, the tutorial's database."""
