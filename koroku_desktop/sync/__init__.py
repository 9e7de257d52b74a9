"""Sync through a PostgreSQL hub: push and pull the event log between devices.

The only importer of psycopg. An adapter like store and llm: it depends on domain only and
talks to the local log through the small `LocalLedger` protocol, which runtime fills.
"""
