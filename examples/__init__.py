"""Demo material: a synthetic LLM traffic generator (and, later, a demo app and a mock LLM server)."""
