"""inferwatch collector: OTLP ingest, ClickHouse store, query API and the inferwatch-server CLI."""
