"""The create-cluster page: the price per hour before anything is created, the composer's
errors on the fields they concern with nothing created, one cluster however often the form is
sent, and only roles that may create see it."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from controlplane.clusters import lifecycle
from controlplane.clusters.models import Cluster
from controlplane.core.models import IdempotencyKey
from controlplane.costs.templatetags.costs_ui import usd

pytestmark = pytest.mark.django_db

URL = "/clusters/new/"
TASK = "controlplane.clusters.tasks."


def browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form_key(client: Client) -> str:
    page = client.get(URL).content.decode()
    return re.search(r'name="idempotency_key" value="([0-9a-f]+)"', page).group(1)


def pools(*rows: dict[str, Any], total: int = 3) -> dict[str, Any]:
    data: dict[str, Any] = {"pools-TOTAL_FORMS": str(total), "pools-INITIAL_FORMS": "0",
                            "pools-MIN_NUM_FORMS": "0", "pools-MAX_NUM_FORMS": "16"}
    for index, row in enumerate(rows):
        data.update({f"pools-{index}-{k}": str(v) for k, v in row.items()})
    return data


HEAD = {"id": "head", "machine_type": "n1-standard-4", "replica_count": 1}
WORKERS = {"id": "workers", "machine_type": "n1-standard-8", "replica_count": 2,
           "min_replica_count": 1, "max_replica_count": 4, "boot_disk_size_gb": 200}


def form(key: str, *, head: dict | None = None, **fields: Any) -> dict[str, Any]:
    return {"team": "vision", "name": "ray-a", "ray_version": "2.47.1",
            "idempotency_key": key, **pools(head or HEAD, WORKERS), **fields}


def test_the_price_is_shown_and_nothing_made_until_create_is_pressed(member, queued):
    client = browser(member)
    key = form_key(client)
    first = client.post(URL, form(key, action="price", labels="owner=ann"))
    assert first.status_code == 200
    assert not Cluster.objects.exists() and queued == []
    # The price is the composer's, the same the API would record for these pools.
    expected = lifecycle.price_cluster({
        "name": "ray-a", "pools": [HEAD, WORKERS], "ray": {"version": "2.47.1"}})
    page = first.content.decode()
    assert f"Create for {usd(expected.hourly_micros)} per hour" in page
    assert f'name="seen_hourly_micros" value="{expected.hourly_micros}"' in page
    assert "whether or not a job runs" in page

    made = client.post(URL, form(key, action="create", labels="owner=ann",
                                 seen_hourly_micros=str(expected.hourly_micros)))
    cluster = Cluster.objects.get()
    assert made.status_code == 302 and made["Location"] == f"/clusters/{cluster.pk}/"
    assert cluster.hourly_micros == expected.hourly_micros and cluster.state == "CREATING"
    assert cluster.request["pools"][1] == {**WORKERS, "boot_disk_size_gb": 200}
    assert cluster.request["labels"] == {"owner": "ann"}
    assert cluster.resource["resourceRuntimeSpec"]["raySpec"]["imageUri"]
    assert queued == [(TASK + "reconcile_cluster", (str(cluster.pk),))]


def test_create_at_a_price_not_shown_shows_the_new_price_instead(member, queued):
    client = browser(member)
    response = client.post(URL, form(form_key(client), action="create",
                                     seen_hourly_micros="1"))
    assert response.status_code == 200 and b"Create for" in response.content
    assert not Cluster.objects.exists() and queued == []


@pytest.mark.parametrize("change,where", [
    # A head pool with accelerators: Vertex's Ray head takes none on this machine.
    ({"head": {**HEAD, "accelerator_type": "NVIDIA_TESLA_A100", "accelerator_count": 1}},
     "errors-pool-0"),
    ({"ray_version": "2.9.0"}, "errors-ray_version"),
    ({"name": "../../etc"}, "errors-name"),
    ({"network": "default; rm -rf /"}, "errors-network"),
    ({"labels": "no equals sign"}, "errors-labels"),
    ({"labels": "Owner=ann"}, "errors-labels"),  # the composer's rule on label keys
    ({"ray_python": "3.10"}, "errors-ray_python"),  # Ray 2.47.1 images carry 3.11 only
])
def test_bad_input_is_an_error_on_its_field_and_creates_nothing(member, queued, change, where):
    client = browser(member)
    key = form_key(client)
    for action in ("price", "create"):
        response = client.post(URL, form(key, action=action, **change))
        assert response.status_code == 400
        page = response.content.decode()
        assert f'id="{where}"' in page, page
    assert not Cluster.objects.exists() and queued == []
    assert not IdempotencyKey.objects.exists()  # the key stays free for the corrected form


def test_a_worker_pool_error_lands_on_its_own_row(member, queued):
    client = browser(member)
    bad_workers = {**WORKERS, "replica_count": 9}  # above its autoscaling max
    data = {"team": "vision", "name": "ray-a", "ray_version": "2.47.1", "action": "price",
            "idempotency_key": form_key(client),
            # A blank row between them is left out; the error still names the right row.
            **pools(HEAD, {}, bad_workers)}
    page = client.post(URL, data).content.decode()
    row = re.search(r'id="errors-pool-2">(.*?)</ul>', page, re.S)
    assert row and "replica" in row.group(1).lower(), page
    assert 'id="errors-pool-0"' not in page and not Cluster.objects.exists()


def test_a_second_submission_of_the_form_creates_nothing_more(member, queued):
    client = browser(member)
    key = form_key(client)
    price = lifecycle.price_cluster({"name": "ray-a", "pools": [HEAD, WORKERS],
                                     "ray": {"version": "2.47.1"}}).hourly_micros
    data = form(key, action="create", seen_hourly_micros=str(price))
    first = client.post(URL, data)
    again = client.post(URL, data)
    cluster = Cluster.objects.get()
    assert first["Location"] == again["Location"] == f"/clusters/{cluster.pk}/"
    assert len(queued) == 1
    # The same form key with another cluster in it is refused, not a second create.
    other = client.post(URL, {**data, "name": "ray-b"})
    assert other.status_code == 400 and b"reload the page" in other.content
    assert Cluster.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_submissions_sent_at_the_same_moment_create_one_cluster(member, queued):
    """A double click: the form key's row, inserted in the creating transaction, makes the
    other request wait on PostgreSQL's unique index and then find the first one's cluster."""
    price = lifecycle.price_cluster({"name": "ray-a", "pools": [HEAD, WORKERS],
                                     "ray": {"version": "2.47.1"}}).hourly_micros
    data = form(form_key(browser(member)), action="create", seen_hourly_micros=str(price))
    start = threading.Barrier(4)

    def send(_: int) -> Any:
        try:
            client = browser(member)
            start.wait(timeout=30)
            return client.post(URL, data)
        finally:
            connection.close()  # each thread's own connection

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(send, range(4)))
    cluster = Cluster.objects.get()
    assert [a.status_code for a in answers] == [302] * 4
    assert {a["Location"] for a in answers} == {f"/clusters/{cluster.pk}/"}
    assert len(queued) == 1


def test_the_team_must_be_one_where_the_user_may_create(member, outsider, queued):
    client = browser(member)
    response = client.post(URL, form(form_key(client), action="price", team="speech"))
    assert response.status_code == 400 and b'id="errors-team"' in response.content
    assert not Cluster.objects.exists()


def test_viewers_get_403_and_members_see_the_form(member, viewer, queued):
    assert browser(viewer).get(URL).status_code == 403
    assert browser(viewer).post(URL, form("k" * 32, action="create")).status_code == 403
    assert b"New cluster" not in browser(viewer).get("/clusters/").content
    page = browser(member).get(URL)
    assert page.status_code == 200 and b"Check and price" in page.content
    more = browser(member).get(URL, {"pools": "6"}).content.decode()
    assert 'name="pools-TOTAL_FORMS" value="6"' in more
    for odd in ("9" * 5000, "-1", "٣"):  # never a 500, whatever the query says
        assert browser(member).get(URL, {"pools": odd}).status_code == 200
    assert b'href="/clusters/new/"' in browser(member).get("/clusters/").content
    assert not Cluster.objects.exists()
