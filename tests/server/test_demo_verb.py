"""``inferwatch-server demo``: its options reach the traffic generator (``examples/traffic.py``) as it spells them."""

from __future__ import annotations

import pytest

from inferwatch_server.cli import main


@pytest.mark.parametrize("extra", [[], ["--with-content"]])
def test_demo_options_are_ones_the_generator_accepts(extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # --rate 0: the generator parses its arguments and exits without sending (port 9 is never reached).
    assert main(["demo", "--key", "iwk_test", "--url", "http://127.0.0.1:9", "--rate", "0", *extra]) == 0
