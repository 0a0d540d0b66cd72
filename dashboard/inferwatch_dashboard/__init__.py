"""inferwatch dashboard: Streamlit app reading the collector query API (arrives with the dashboard issue)."""
