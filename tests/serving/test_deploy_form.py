"""The endpoint page's deploy form: the catalogue's CPU and GPU machines as a menu, each with its
hourly price from the price table (a g2 machine with its GPU, n1 GPUs priced apiece), the price
of the chosen replicas in the confirmation, and a machine the model's runtime cannot run on
refused on the field with the valid ones named, nothing deployed."""

from __future__ import annotations

import html
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from controlplane.backends.images_base import get_image_registry
from controlplane.runs.models import Job
from controlplane.serving import registry
from controlplane.serving.models import Deployment, Endpoint, ModelEntry
from tests.serving.fakes import FakeServing
from tests.serving.test_lifecycle import ready_endpoint, ready_entry
from tests.serving.test_tensorrt import COPY, _ready
from vertexplan.pricing import default_table


def usd(*rows: tuple[str, str, int]) -> Decimal:
    """The price table's on-demand dollars per hour for (kind, name, quantity) rows, summed."""
    table = default_table()
    return sum((table.price(kind, name, settings.VERTEX_REGION).on_demand * n
                for kind, name, n in rows), Decimal(0))


def cents(amount: Decimal) -> str:
    return f"${amount.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"


@pytest.fixture
def endpoint(fake: FakeServing, queued: list, trained_job: Job, member: Any) -> Endpoint:
    ready_entry(trained_job, member)
    return ready_endpoint(trained_job.team, member)


def deploy(client: Client, endpoint: Endpoint, entry: ModelEntry, **fields: Any) -> str:
    body = {"model": entry.pk, "machine_type": "n1-standard-4", "accelerator_type": "",
            "accelerator_count": 0, "min_replicas": 1, "max_replicas": 1,
            "autoscaling_metric": "", "autoscaling_target": 0, "traffic_percent": 100, **fields}
    page = client.post(reverse("serving-endpoint-deploy", args=[endpoint.pk]), body,
                       follow=True)
    return html.unescape(page.content.decode())


def option(page: str, select: str, value: str) -> str | None:
    menu = re.search(rf'<select name="{select}".*?</select>', page, re.S)
    assert menu, f"no {select} menu"
    found = re.search(rf'<option value="{re.escape(value)}"[^>]*>([^<]*)</option>', menu[0])
    return found[1] if found else None


def test_the_menus_offer_serving_machines_with_their_hourly_prices(
        endpoint: Endpoint, member: Any, client: Client) -> None:
    client.force_login(member)
    page = client.get(reverse("serving-endpoint", args=[endpoint.pk])).content.decode()
    # Open on the page, not folded away.
    assert "<summary>Deploy a model</summary>" not in page and 'id="deploy-form"' in page
    g2 = option(page, "machine_type", "g2-standard-8")
    assert g2 is not None and "1 x NVIDIA_L4" in g2
    assert g2.endswith(f"{cents(usd(('machine', 'g2-standard-8', 1)))}/h")
    n1 = option(page, "machine_type", "n1-standard-4")
    assert n1.endswith(f"{cents(usd(('machine', 'n1-standard-4', 1)))}/h + GPUs")
    t4 = option(page, "accelerator_type", "NVIDIA_TESLA_T4")
    assert t4 == f"NVIDIA_TESLA_T4: +{cents(usd(('accelerator', 'NVIDIA_TESLA_T4', 1)))}/h each"
    # No TPU: no serving runtime runs on one.
    assert option(page, "machine_type", "ct5lp-hightpu-1t") is None
    # Where the prices come from and when they were read.
    source = re.search(r'id="deploy-price-source">([^<]*)<', page)[1]
    assert "vertex_training_prices.csv" in source and re.search(r"read \d{4}-\d\d", source)
    assert "js/deploy_price.js" in page


def test_a_deploy_says_what_its_replicas_cost_an_hour(
        endpoint: Endpoint, member: Any, client: Client) -> None:
    client.force_login(member)
    entry = ModelEntry.objects.get()
    page = deploy(client, endpoint, entry, accelerator_type="NVIDIA_TESLA_T4",
                  accelerator_count=1, min_replicas=2, max_replicas=3)
    replica = usd(("machine", "n1-standard-4", 1), ("accelerator", "NVIDIA_TESLA_T4", 1))
    assert (f"on 2 x n1-standard-4 with 1 x NVIDIA_TESLA_T4: {cents(replica * 2)}/h at 2 "
            f"replicas, up to {cents(replica * 3)}/h at 3") in page
    # A machine that comes with its GPU is deployed with it, priced once (its rate has it).
    page = deploy(client, endpoint, entry, machine_type="g2-standard-8")
    assert (f"on 1 x g2-standard-8 with 1 x NVIDIA_L4: "
            f"{cents(usd(('machine', 'g2-standard-8', 1)))}/h at 1 replica") in page
    g2 = Deployment.objects.get(machine_type="g2-standard-8")
    assert (g2.accelerator_type, g2.accelerator_count) == ("NVIDIA_L4", 1)


@pytest.mark.parametrize(("machine", "said"), [
    ("ct5lp-hightpu-1t", "ct5lp-hightpu-1t is a TPU machine: models are served on the menu's "
                         "CPU and NVIDIA GPU machines"),
    ("<b>n9</b>", "<b>n9</b> is not a machine type of the catalogue"),
])
def test_a_machine_no_model_runs_on_is_refused_on_the_field(
        endpoint: Endpoint, member: Any, client: Client, machine: str, said: str) -> None:
    client.force_login(member)
    before = Deployment.objects.count()
    raw = client.post(reverse("serving-endpoint-deploy", args=[endpoint.pk]), {
        "model": ModelEntry.objects.get().pk, "machine_type": machine, "accelerator_count": 0,
        "min_replicas": 1, "max_replicas": 1, "autoscaling_target": 0,
        "traffic_percent": 100}, follow=True).content.decode()
    assert "<b>n9</b>" not in raw  # the hostile value is shown as text
    page = html.unescape(raw)
    assert "machine_type" in page and said in page
    assert Deployment.objects.count() == before


def test_a_tensorrt_model_is_refused_off_its_gpu_and_the_menu_knows_it(
        endpoint: Endpoint, backend: Any, trained_job: Job, member: Any, client: Client,
        django_capture_on_commit_callbacks: Any) -> None:
    get_image_registry().push(COPY)
    with django_capture_on_commit_callbacks(execute=True):
        entry = registry.register(job=trained_job, user=member, step=60, runtime="tensorrt",
                                  image_uri=COPY)
    entry = _ready(entry, backend)
    client.force_login(member)
    before = Deployment.objects.count()
    page = deploy(client, endpoint, entry, machine_type="n1-standard-4",
                  accelerator_type="NVIDIA_TESLA_T4", accelerator_count=1)
    assert ("is a TensorRT engine built on NVIDIA_L4: it runs only on a machine with NVIDIA_L4 "
            "(g2-standard-4, g2-standard-8") in page
    assert "not on n1-standard-4 with NVIDIA_TESLA_T4" in page
    assert Deployment.objects.count() == before
    # The model's option says which GPU it needs, for the menu's script to offer only those.
    detail = client.get(reverse("serving-endpoint", args=[endpoint.pk])).content.decode()
    assert re.search(rf'<option value="{entry.pk}"[^>]*data-gpu="NVIDIA_L4"', detail)
    page = deploy(client, endpoint, entry, machine_type="g2-standard-8")
    assert Deployment.objects.filter(model_entry=entry, accelerator_type="NVIDIA_L4").exists()


def test_the_api_refuses_a_tpu_machine_on_its_field(endpoint: Endpoint, member: Any) -> None:
    client = APIClient()
    client.force_authenticate(member)
    before = Deployment.objects.count()
    answer = client.post(f"/api/v1/serving/endpoints/{endpoint.pk}/deployments/", {
        "model": ModelEntry.objects.get().pk, "machine_type": "ct5lp-hightpu-1t"},
        format="json")
    assert answer.status_code == 400
    assert "is a TPU machine" in answer.json()["machine_type"][0]
    assert Deployment.objects.count() == before

