"""The demo runs as production does unless asked otherwise: DEBUG off, a secret key of its own
kept in its var folder, plain HTTP on the loopback."""

from __future__ import annotations

from pathlib import Path

from config import demo


def test_debug_is_off_unless_asked_for_and_the_key_is_the_demos_own(tmp_path: Path) -> None:
    args = demo.parse_args(["--var-dir", str(tmp_path / "demo")])
    env = demo.demo_stack(args).env()
    assert env["DEBUG"] == "false"
    assert (env["SECURE_SSL_REDIRECT"], env["SECURE_COOKIES"]) == ("false", "false")
    key = Path(env["SECRET_KEY_FILE"])
    assert key.parent == tmp_path / "demo" and key.stat().st_mode & 0o777 == 0o600
    made = key.read_text()
    assert len(made) > 40

    debug = demo.demo_stack(demo.parse_args(["--var-dir", str(tmp_path / "demo"), "--debug"]))
    assert debug.env()["DEBUG"] == "true"
    assert key.read_text() == made, "a restart keeps the key its secrets are encrypted with"
    other = demo.demo_stack(demo.parse_args(["--var-dir", str(tmp_path / "other")])).env()
    assert Path(other["SECRET_KEY_FILE"]).read_text() != made
