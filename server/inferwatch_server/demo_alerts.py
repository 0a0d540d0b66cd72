"""The demo's alert channels: the packaged rules, delivered to a local :class:`~.alert_receiver.AlertReceiver`.

The packaged rules name a Slack and a PagerDuty channel whose credentials come from the environment; in a demo
neither is set, so every alert would only log "not available". ``up --demo-traffic`` (when no rules file of the
user's is configured) instead starts a receiver on 127.0.0.1 and writes a rules file beside the demo's data: the
packaged rules unchanged, with ``slack``, ``pagerduty`` and ``webhook`` channels pointing at the receiver. The
credentials are random per start and reach the channels through environment variables, as real ones would.

PagerDuty's client speaks only HTTPS, so its endpoint needs a certificate: a one-day self-signed one for
127.0.0.1, made with the ``openssl`` command and trusted through the channel's ``ca_bundle``. Without ``openssl``
the demo runs without the PagerDuty channel and says so.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml
from inferwatch_alerts.rules.files import RULES_FILE_ENV, default_rules_text

from .alert_receiver import AlertReceiver

SLACK_URL_ENV: Final = "INFERWATCH_DEMO_SLACK_WEBHOOK_URL"
PAGERDUTY_KEY_ENV: Final = "INFERWATCH_DEMO_PAGERDUTY_ROUTING_KEY"
WEBHOOK_KEY_ENV: Final = "INFERWATCH_DEMO_WEBHOOK_SIGNING_KEY"
RULES_FILE: Final = "demo-alert-rules.yaml"
CERT_DIR: Final = "demo-alert-receiver"
HEADER: Final = (
    "# Written by `inferwatch-server up --demo-traffic` at each start: the packaged default rules, with their\n"
    "# channels pointed at the demo's local alert receiver (127.0.0.1). Not meant to be edited; copy the packaged\n"
    "# rules (`inferwatch-server alerts rules`) for a rules file of your own.\n"
)


@dataclass
class DemoAlerts:
    """A started receiver, the rules file that points at it, and the environment its channels read."""

    receiver: AlertReceiver
    rules_file: Path
    env: dict[str, str]  # the channels' credentials and INFERWATCH_ALERT_RULES_FILE
    channels: tuple[str, ...]
    note: str  # empty, or why a channel is missing

    def stop(self) -> None:
        self.receiver.stop()


def self_signed_certificate(directory: Path) -> tuple[Path, Path] | None:
    """(certificate, key) for IP 127.0.0.1, valid one day, written to ``directory`` (the key mode 0600); None
    when the ``openssl`` command is missing or fails."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    try:
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1"],
            check=True, capture_output=True, timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    key.chmod(0o600)
    return cert, key


def channel_specs(receiver: AlertReceiver, ca_bundle: Path | None) -> dict[str, dict[str, Any]]:
    """The rules file's ``channels:`` for ``receiver`` (PagerDuty only when it serves HTTPS)."""
    specs: dict[str, dict[str, Any]] = {
        "slack": {"type": "slack", "webhook_url_env": SLACK_URL_ENV, "max_retries": 1},
        "webhook": {"type": "webhook", "url": receiver.webhook_url, "signing_key_env": WEBHOOK_KEY_ENV,
                    "max_retries": 1},
    }
    events_url = receiver.pagerduty_events_url
    if events_url is not None and ca_bundle is not None:
        specs["pagerduty"] = {"type": "pagerduty", "routing_key_env": PAGERDUTY_KEY_ENV, "events_url": events_url,
                              "ca_bundle": str(ca_bundle), "source": "inferwatch-demo", "max_retries": 1}
    return specs


def demo_rules_text(channels: Mapping[str, Mapping[str, Any]]) -> str:
    """The packaged rules with ``channels`` and a routing that sends every severity to all of them (critical
    ones to PagerDuty too, as the packaged routing does)."""
    rules = yaml.safe_load(default_rules_text())
    rules["channels"] = {name: dict(spec) for name, spec in channels.items()}
    chat = [name for name in ("slack", "webhook") if name in channels]
    rules["routing"] = {"critical": [name for name in ("pagerduty",) if name in channels] + chat,
                        "warning": chat, "info": chat}
    return HEADER + yaml.safe_dump(rules, sort_keys=False, allow_unicode=True)


def start_demo_alerts(directory: Path) -> DemoAlerts:
    """Start a receiver and write its rules file into ``directory`` (beside the demo's data)."""
    directory.mkdir(parents=True, exist_ok=True)
    tls = self_signed_certificate(directory / CERT_DIR)
    signing_key = secrets.token_urlsafe(24)
    receiver = AlertReceiver(signing_key, tls=tls).start()
    specs = channel_specs(receiver, tls[0] if tls else None)
    rules_file = directory / RULES_FILE
    rules_file.write_text(demo_rules_text(specs), encoding="utf-8")
    env = {SLACK_URL_ENV: receiver.slack_url, WEBHOOK_KEY_ENV: signing_key,
           PAGERDUTY_KEY_ENV: secrets.token_hex(16), RULES_FILE_ENV: str(rules_file)}
    note = "" if "pagerduty" in specs else "no PagerDuty channel: the openssl command (for its HTTPS) is missing"
    return DemoAlerts(receiver, rules_file, env, tuple(specs), note)
