"""The platform's HTTP app."""

from inferwatch_collector.app import create_app

__all__ = ["create_app"]
