"""inferwatch server: the composition root of the platform.

:mod:`.cli` is the ``inferwatch-server`` command (one module per verb group), :mod:`.app` builds the HTTP app
from every package's routers and wires the embedded scheduler into its lifespan, and :mod:`.serve` runs it under
uvicorn. Everything else imports nothing from here.
"""
