"""ClickHouse migrations, shipped as package data of inferwatch-server.

Numbered ``NNNN_name.sql`` files, append-only: never edit one that has been applied (the runner refuses to
continue on a checksum mismatch). Each file is one source rendered for the ``single``, ``replicated`` and
``sharded`` targets by :mod:`inferwatch_collector.migrations`.
"""
