"""Alert notifiers: Slack, PagerDuty Events API v2 and a generic signed webhook, behind one dispatcher.

* :mod:`.base`: :class:`AlertNotification` (one state transition), :class:`NotifyError`, the :class:`Notifier`
  protocol, and the secret redaction every notifier registers its credentials with;
* :mod:`.slack`, :mod:`.pagerduty`, :mod:`.webhook`: one class per channel type, each retrying briefly itself;
* :mod:`.dispatch`: :class:`Dispatcher` fans a notification out, retries with backoff, records every delivery in
  ``notifications`` and never raises;
* :mod:`.config`: :func:`load_channels` builds the notifiers from the rules file's ``channels:`` section, with
  credentials taken from the environment or a secrets file.
"""

from .base import AlertNotification, Notifier, NotifyError
from .config import load_channels
from .dispatch import Delivery, Dispatcher
from .pagerduty import PagerDutyNotifier
from .slack import SlackNotifier
from .webhook import WebhookNotifier

__all__ = [
    "AlertNotification",
    "Delivery",
    "Dispatcher",
    "Notifier",
    "NotifyError",
    "PagerDutyNotifier",
    "SlackNotifier",
    "WebhookNotifier",
    "load_channels",
]
