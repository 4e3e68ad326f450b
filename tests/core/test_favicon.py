"""Every page names its icon: without one the browser asks for /favicon.ico, which answers 404
and shows as an error in the console of every page (found by the Ray page's browser walk)."""

from __future__ import annotations

from pathlib import Path

from django.test import Client

STATIC = Path(__file__).resolve().parents[2] / "controlplane" / "core" / "static"


def test_the_pages_link_an_icon_that_exists(db: None) -> None:
    html = Client().get("/login/").content.decode()
    assert 'rel="icon"' in html and "img/favicon" in html and 'type="image/svg+xml"' in html
    icon = (STATIC / "img" / "favicon.svg").read_text()
    assert icon.startswith("<svg") and "<script" not in icon
