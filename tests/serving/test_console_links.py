"""An endpoint's page links to Google's pages about it (and, against the emulator, to its own
page), with hostile names kept inside their parameters."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.test import Client
from django.urls import reverse

from controlplane.runs import links
from controlplane.serving.models import Endpoint
from controlplane.teams.models import Team


def _by_key(found: list[links.Link]) -> dict[str, str]:
    return {link.key: link.url for link in found}


def test_endpoint_links_name_its_project_region_and_id(settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    found = _by_key(links.for_endpoint("projects/my-proj/locations/europe-west4/endpoints/77",
                                       "/serving/endpoints/1/"))
    assert found["console"] == ("https://console.cloud.google.com/agent-platform/locations/"
                                "europe-west4/endpoints/77?project=my-proj")
    query = parse_qs(urlsplit(found["logs"]).query)
    assert query["project"] == ["my-proj"]
    assert query["query"] == ['resource.type="aiplatform.googleapis.com/Endpoint" AND '
                              'resource.labels.endpoint_id="77"']
    state = json.loads(parse_qs(urlsplit(found["latency"]).query)["pageState"][0])
    series = state["xyChart"]["dataSets"][0]["timeSeriesFilter"]["filter"]
    assert 'metric.type="aiplatform.googleapis.com/prediction/online/prediction_latencies"' \
        in series and 'resource.label."endpoint_id"="77"' in series
    assert links.for_endpoint("", "/x/") == []
    assert links.for_endpoint("projects/p/locations/l/endpoints/1/extra", "/x/") == []


def test_hostile_endpoint_ids_stay_inside_their_parameter() -> None:
    hostile = 'e"&project=evil#x'
    for url in _by_key(links.google_endpoint_links("p", "r", hostile)).values():
        parts = urlsplit(url)
        assert parts.netloc == "console.cloud.google.com" and parts.fragment == ""
        assert parse_qs(parts.query)["project"] == ["p"]
    logs = parse_qs(urlsplit(_by_key(links.google_endpoint_links("p", "r", hostile))["logs"])
                    .query)["query"][0]
    assert logs.endswith('endpoint_id="e\\"&project=evil#x"')


def test_the_endpoint_page_shows_the_links(client: Client, team: Team, member: Any,
                                           settings: Any) -> None:
    endpoint = Endpoint.objects.create(
        team=team, created_by=member, name="chat", state=Endpoint.State.READY,
        vertex_name="projects/p/locations/us-central1/endpoints/9")
    client.force_login(member)
    page = reverse("serving-endpoint", args=[endpoint.pk])
    settings.VERTEX_EMULATOR_ADDR = ""
    html = client.get(page).content.decode()
    assert "Open in Google Cloud" in html
    assert ('href="https://console.cloud.google.com/agent-platform/locations/us-central1/'
            'endpoints/9?project=p"') in html
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:1"
    html = client.get(page).content.decode()
    assert "console.cloud.google.com" not in html and f'href="{page}#latency-chart"' in html
