"""The recommender page starts on the server's region (VERTEX_REGION), or the first priced one
in the region catalogue's order when the price table has none for it; never the alphabetically
first (asia-east1) that a menu without a selection shows."""

from __future__ import annotations

import re
from typing import Any

from django.test import Client
from django.urls import reverse


def selected_region(client: Client, **query: str) -> str | None:
    html = client.get(reverse("job-recommend"), query).content.decode()
    select = re.search(r'<select id="r-region".*?</select>', html, re.S)
    assert select, "no region menu"
    found = re.search(r'<option value="([^"]*)" selected', select.group(0))
    return found.group(1) if found else None


def test_the_page_starts_on_the_servers_region(member_client: Client, settings: Any) -> None:
    assert selected_region(member_client) == settings.VERTEX_REGION == "us-central1"
    settings.VERTEX_REGION = "europe-west4"
    assert selected_region(member_client) == "europe-west4"


def test_an_unpriced_server_region_starts_on_the_first_priced_in_catalogue_order(
        member_client: Client, settings: Any) -> None:
    settings.VERTEX_REGION = "us-west2"  # a Vertex region the price table does not cover
    assert selected_region(member_client) == "us-central1"


def test_the_region_asked_for_stays_chosen(member_client: Client) -> None:
    assert selected_region(member_client, region="asia-east1") == "asia-east1"
