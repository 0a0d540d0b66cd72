"""``python -m inferwatch_server``: the same as the ``inferwatch-server`` command."""

import sys

from .cli import main

if __name__ == "__main__":  # guarded: spawned ingest workers re-import the main module
    sys.exit(main())
