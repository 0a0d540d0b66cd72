"""The dashboard pages, one per file; each is run by st.navigation (see app.py)."""
