"""Static files: hashed names and gzip once collectstatic has run, plain names before."""

from __future__ import annotations

import re
from pathlib import Path

from django.core.management import call_command
from django.templatetags.static import static
from django.test import override_settings


def test_hashed_and_compressed_after_collectstatic(tmp_path: Path) -> None:
    with override_settings(STATIC_ROOT=tmp_path):
        assert static("js/app.js") == "/static/js/app.js"  # no manifest yet: plain names
        call_command("collectstatic", "--noinput", "-v", "0")
    with override_settings(STATIC_ROOT=tmp_path):
        url = static("js/app.js")
        assert re.fullmatch(r"/static/js/app\.[0-9a-f]{12}\.js", url), url
        hashed = tmp_path / url.removeprefix("/static/")
        assert hashed.exists() and Path(f"{hashed}.gz").exists()
        # A name the manifest does not know is served plain rather than failing the page.
        assert static("js/not-collected.js") == "/static/js/not-collected.js"
