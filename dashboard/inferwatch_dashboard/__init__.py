"""inferwatch dashboard: a Streamlit app that reads the collector's query API over HTTP, never the database.

``app.py`` is the Streamlit entry file (a router); ``launch.py`` starts it as a process for the CLI.
"""
