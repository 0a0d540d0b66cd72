"""The README's configuration table and the CLI's `config` output come from the same Settings fields."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inferwatch_collector.settings import Settings
from inferwatch_server.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_readme_documents_every_setting_exactly(capsys):
    main(["config"])
    printed = capsys.readouterr().out.strip().splitlines()
    readme = (ROOT / "README.md").read_text()
    for line in printed:
        assert line in readme, f"README configuration table is out of date; missing: {line}"
    documented = set(re.findall(r"`INFERWATCH_([A-Z_]+)`", readme))
    assert {name.upper() for name in Settings.model_fields} <= documented


def test_readme_gives_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_keys_cli_creates_lists_and_revokes(tmp_path, capsys):
    data = str(tmp_path / "data")
    assert main(["--data-dir", data, "keys", "create", "--project", "shop", "--scope", "ingest",
                 "--scope", "read", "--name", "ci"]) == 0
    key = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"iwk_[0-9a-f]{12}_[A-Za-z0-9_-]+", key)
    assert main(["--data-dir", data, "keys", "list", "--project", "shop"]) == 0
    listing = capsys.readouterr().out
    key_id = key.split("_")[1]
    assert key_id in listing and "ingest,read" in listing and "active" in listing
    assert key.split("_", 2)[2] not in listing
    assert main(["--data-dir", data, "keys", "revoke", key_id]) == 0
    main(["--data-dir", data, "keys", "list"])
    assert "revoked" in capsys.readouterr().out
    assert main(["--data-dir", data, "keys", "revoke", "ffffffffffff"]) == 1


def test_cli_reports_bad_input_clearly(tmp_path, capsys):
    assert main(["--data-dir", str(tmp_path / "d"), "keys", "create", "--project", "Bad Name",
                 "--scope", "read"]) == 2
    assert "project name 'Bad Name' is invalid" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["keys", "create", "--project", "x", "--scope", "write"])


def test_migrate_cli_is_idempotent_and_shows_status(tmp_path, capsys):
    data = str(tmp_path / "data")
    assert main(["--data-dir", data, "migrate"]) == 0
    first = capsys.readouterr().out
    assert "0001_init.sql" in first and "applied" in first
    assert main(["--data-dir", data, "migrate"]) == 0
    assert "up to date" in capsys.readouterr().out
    assert main(["--data-dir", data, "migrate", "--status"]) == 0
    assert "0001" in capsys.readouterr().out


def test_every_test_the_security_docs_name_exists():
    """The security guarantees name the tests that check them; a renamed or deleted test must update the docs."""
    tests = {path.relative_to(ROOT / "tests").as_posix() for path in (ROOT / "tests").rglob("test_*.py")}
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Security\n", 1)[1].split("\n## ", 1)[0]
    named = 0
    for text, default in (((ROOT / "docs" / "security.md").read_text(), ""), (section, "collector/")):
        for name in re.findall(r"`((?:[a-z_]+/)*test_[a-z0-9_]+\.py)`", text):
            full = name.removeprefix("tests/") if "/" in name else default + name
            assert full in tests, f"the security docs name {name}, which is not a test file"
            named += 1
    assert named > 20
