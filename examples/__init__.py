"""Demo material run from the checkout: the demo app, the mock LLM server it calls, and a synthetic OTLP traffic
generator (not part of the installed packages)."""
