"""inferwatch collector: OTLP ingest, the ClickHouse store, the query API and the cost code."""
