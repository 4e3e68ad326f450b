"""The endpoint page's prediction tester: one request goes through the serving backend (the
scripted Vertex here) and the page shows the predictions and the round trip's time; what is not
a request the model would answer (not JSON, too big, an unknown key, a bad instance) is refused
naming the field, with nothing sent; another team's endpoint is invisible and a viewer may not
send."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.backends import errors
from controlplane.serving import tester
from controlplane.serving.models import Endpoint
from tests.serving.fakes import FakeServing
from tests.serving.test_api import deployed  # noqa: F401 -- the fixture

pytestmark = pytest.mark.usefixtures("deployed")


def send(client: Client, endpoint: Endpoint, text: str) -> tuple[int, str]:
    page = client.post(reverse("serving-endpoint-predict", args=[endpoint.pk]),
                       {"request": text})
    return page.status_code, page.content.decode()


def predictions_sent(fake: FakeServing) -> int:
    return sum(1 for call in fake.calls if call[0] in ("predict", "raw_predict"))


def test_a_request_is_answered_through_the_backend_with_its_latency(
        deployed: Endpoint, fake: FakeServing, member: Any, client: Client) -> None:  # noqa: F811
    client.force_login(member)
    page = client.get(reverse("serving-endpoint", args=[deployed.pk])).content.decode()
    assert 'id="prediction-tester"' in page and 'name="request"' in page
    before = predictions_sent(fake)
    status, page = send(client, deployed, json.dumps(
        {"instances": ["def f(", {"prompt": "import ", "max_tokens": 4}],
         "parameters": {"temperature": 0}}))
    assert status == 200
    assert predictions_sent(fake) == before + 1
    assert fake.calls[-1] == ("predict", deployed.vertex_name)
    assert re.search(r"Answered in <b>\d+ ms</b> by deployed model", page)
    answer = json.loads(html.unescape(re.search(
        r'id="prediction-answer">(.*?)</pre>', page, re.S)[1]))
    assert answer["predictions"] == [{"text": "x", "tokens": 1}] * 2
    assert answer["deployed_model_id"]


@pytest.mark.parametrize(("text", "said"), [
    ("<script>alert(1)</script>", "request: not JSON (Expecting value at line 1, column 1)"),
    ('["a"]', "request: a JSON object with instances"),
    ('{"instances": ["a"], "instance": 1}', "instance"),
    ('{"instances": []}', "instances:"),
    ('{"instances": [{"prompt": "a", "max_tokens": 100000}]}', "max_tokens"),
    ("x" * (tester.MAX_BODY_BYTES + 1),
     f"request: {tester.MAX_BODY_BYTES + 1:,} bytes; a test request is at most "
     f"{tester.MAX_BODY_BYTES:,} bytes"),
])
def test_what_is_not_a_request_is_refused_by_field_and_nothing_is_sent(
        deployed: Endpoint, fake: FakeServing, member: Any, client: Client,  # noqa: F811
        text: str, said: str) -> None:
    client.force_login(member)
    before = predictions_sent(fake)
    status, page = send(client, deployed, text)
    assert status == 400
    refused = html.unescape(re.search(r'id="prediction-refused">([^<]*)<', page)[1])
    assert refused.startswith("No prediction: ") and said in refused, refused
    assert predictions_sent(fake) == before
    # What was typed stays in the box, as text.
    assert "<script>alert(1)</script>" not in page
    if len(text) < 100:
        assert html.escape(text) in page or html.escape(text, quote=False) in page


def test_a_failed_prediction_says_what_the_backend_said(
        deployed: Endpoint, fake: FakeServing, member: Any, client: Client) -> None:  # noqa: F811
    client.force_login(member)
    fake.predict_error = errors.BackendError("Predict: the model server answered 500")
    status, page = send(client, deployed, json.dumps({"instances": ["a"]}))
    assert status == 400
    assert ("No prediction: the endpoint did not answer: Predict: the model server answered 500"
            in html.unescape(page))


def test_another_team_or_a_viewer_cannot_send(
        deployed: Endpoint, fake: FakeServing, outsider: Any, viewer: Any,  # noqa: F811
        client: Client) -> None:
    before = predictions_sent(fake)
    client.force_login(outsider)
    assert send(client, deployed, json.dumps({"instances": ["a"]}))[0] == 404
    client.force_login(viewer)
    assert send(client, deployed, json.dumps({"instances": ["a"]}))[0] == 403
    page = client.get(reverse("serving-endpoint", args=[deployed.pk])).content.decode()
    assert 'id="prediction-tester"' not in page
    assert predictions_sent(fake) == before
