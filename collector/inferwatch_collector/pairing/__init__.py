"""One LLM call is one row, whatever emitted it.

Another library's LLM span and the provider client's own span (or two instrumentations of one client) describe
the same provider request, nested or as siblings, and may arrive in different OTLP requests seconds apart. Rows
from scopes other than ours are held for ``pairing_window_s`` (:mod:`.held`), grouped by request (:mod:`.match`),
merged into one row with the union of their facts (:mod:`.merge`), and written once (:mod:`.service`); the other
spans stay in the trace view as span rows.
"""

from .held import HeldCall, is_held, split_held, to_held_row
from .service import CallPairing

__all__ = ["CallPairing", "HeldCall", "is_held", "split_held", "to_held_row"]
