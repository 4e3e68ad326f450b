"""A Ray job's output as its cluster page shows it (controlplane/clusters/ray_output.py), and
the dashboard address as a link or none (controlplane/clusters/dashboard.py): pure functions,
no database."""

from __future__ import annotations

import json

import pytest

from controlplane.clusters import dashboard, ray_output

WORKER = "(RayTrainWorker pid=7377, ip=127.0.0.1) "


def test_terminal_escapes_and_controls_are_gone_and_the_text_stays() -> None:
    assert ray_output.readable("\x1b[1m\x1b[36mINFO\x1b[0m ready") == "INFO ready"
    # Cursor moves and erases (progress bars), a window title, a bell and a backspace.
    assert ray_output.readable("\x1b[2K\x1b[1A 50%|#####") == " 50%|#####"
    assert ray_output.readable("\x1b]0;title\x07done\x08\x07") == "done"
    assert ray_output.readable("a\tb <c> & 'd'") == "a\tb <c> & 'd'"


def test_an_event_line_shows_as_its_message_after_the_worker() -> None:
    line = WORKER + json.dumps({"severity": "INFO", "message": "step 3/40 loss 2.1000",
                                "event": "step", "step": 3, "loss": 2.1})
    assert ray_output.readable("\x1b[36m" + line + "\x1b[0m") == WORKER + "step 3/40 loss 2.1000"
    # Not an event of the contract, or an event without a message: the line as it is.
    other = WORKER + '{"metric": 1}'
    assert ray_output.readable(other) == other
    bare = '{"event": "step", "step": 1}'
    assert ray_output.readable(bare) == bare


def test_the_page_gets_the_newest_lines_once_each() -> None:
    raw = "".join(f"\x1b[32mline {n}\x1b[0m\n" for n in range(1, 8))
    shown = ray_output.for_page(raw, limit=3)
    assert shown.text.splitlines() == ["line 5", "line 6", "line 7"]
    assert (shown.shown, shown.total, shown.cut) == (3, 7, True)
    whole = ray_output.for_page(raw)
    assert whole.text.count("line 3") == 1 and not whole.cut


@pytest.mark.parametrize("address,emulated,url", [
    ("127.0.0.1:8265", True, "http://127.0.0.1:8265"),
    ("abc-dot-us-central1.aiplatform-training.googleusercontent.com", False,
     "https://abc-dot-us-central1.aiplatform-training.googleusercontent.com"),
    ("HTTPS://Host.example:8443/ray/?tab=jobs", False, "https://Host.example:8443/ray/?tab=jobs"),
    ("http://[::1]:8265/", True, "http://[::1]:8265/"),
])
def test_an_http_dashboard_address_is_a_url(address, emulated, url) -> None:
    assert dashboard.url(address, emulated=emulated) == url


@pytest.mark.parametrize("address", [
    "", "   ", "javascript:alert(1)", "JavaScript://x%0aalert(1)", "data:text/html,<b>x</b>",
    "vbscript:msgbox", "ftp://files.example/", "file:///etc/passwd",
    '"><script>alert(1)</script>', "http://user:pass@host.example/", "http://evil.example@ok/",
    "host name.example", "http://host.example/a b", "http://host.example:99999/",
    "http://host.example/\"onmouseover=alert(1)", "http://host.example/<x>", "h" * 301,
])
def test_anything_else_is_no_link(address) -> None:
    assert dashboard.url(address, emulated=False) is None
    assert dashboard.url(address, emulated=True) is None
