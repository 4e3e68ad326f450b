"""What the compose page's plan panel says is true: each device's share of the parameters in a
unit that shows it, a TPU's own runtime and processes, and a job whose run time cannot be
estimated priced per hour, with its timeout shown as the cap it is, never as the estimate."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from tests.compose.test_compose_page import form_data

A100_8 = {"chief_machine_type": "a2-highgpu-8g", "chief_accelerator_type": "NVIDIA_TESLA_A100",
          "chief_accelerator_count": "8", "workers_replica_count": "0", "precision": "bf16"}
V5E_2X2 = {"chief_machine_type": "ct5lp-hightpu-4t", "chief_tpu_topology": "2x2",
           "workers_replica_count": "0", "precision": "bf16"}
# One n1-standard-4 with a 100 GB pd-ssd boot disk, us-central1, on demand, per hour.
N1_4_HOURLY = 245_279


def panel(client: Client, **fields: str) -> str:
    response = client.post(reverse("job-validate"), form_data(**fields))
    assert response.status_code == 200
    checked = response.context["checked"]
    assert checked is not None and checked.ok, checked.errors
    return response.content.decode()


def memory_row(html: str, label: str) -> str:
    match = re.search(rf"<tr><th>{re.escape(label)}</th><td[^>]*>(.*?)</td>", html)
    assert match, f"no {label} row in the memory plan"
    return match.group(1)


@pytest.mark.parametrize(("fields", "billions", "shown"), [
    # 7B under FSDP on 8 GPUs: each holds 1/8 of the fp32 weights, 4 x 7e9 / 8 bytes.
    ({"strategy": "fsdp", **A100_8}, "7", "3.26 GB"),
    ({"strategy": "fsdp", **A100_8}, "0.001", "488 KB"),  # a toy model: not 0.00 GB
    # tensor 2 x pipeline 2 slice the model in 4, FSDP shards each slice over the other 2.
    ({"strategy": "fsdp", "parallel_tensor": "2", "parallel_pipeline": "2", **A100_8},
     "0.001", "488 KB"),
    ({"strategy": "tpu_jax", "tpu_sharding": "fsdp", **V5E_2X2}, "0.001", "977 KB"),
], ids=["fsdp-7b", "fsdp-toy", "fsdp-tp2-pp2-toy", "tpu-sharded-toy"])
def test_each_devices_share_of_the_parameters_is_shown_never_zero(
        member_client: Client, backend: Backend, fields: dict[str, str], billions: str,
        shown: str) -> None:
    html = panel(member_client, model_parameters_b=billions, **fields)
    assert memory_row(html, "Parameters") == shown
    assert "0.00 GB" not in html


def test_a_tpu_slice_shows_its_own_runtime_and_one_process_holding_its_chips(
        member_client: Client, backend: Backend) -> None:
    html = panel(member_client, strategy="tpu_jax", tpu_sharding="fsdp", model_parameters_b="1",
                 **V5E_2X2)
    assert "CUDA" not in html and "NCCL" not in html
    assert memory_row(html, "Runtime (libtpu&#x27;s reserved HBM)") == "768 MB"
    # A single-host v5e slice: one JAX process, its four chips the devices.
    assert 'id="processes">1<' in html and 'id="devices">4<' in html
    assert "4 processes" not in html and 'id="world-size"' not in html
    gpu = panel(member_client, strategy="fsdp", model_parameters_b="1", **A100_8)
    assert memory_row(gpu, "Runtime (CUDA context, NCCL buffers)") == "1.00 GB"
    assert 'id="world-size">8<' in gpu and 'id="processes"' not in gpu


def test_without_a_run_time_the_estimate_gives_the_rate_and_the_timeout_as_a_cap(
        member_client: Client, backend: Backend) -> None:
    html = panel(member_client)  # the built-in trainer, no model size, nothing measured
    assert 'id="estimate-no-run-time"' in html and "no model size is given" in html
    assert 'id="estimate-on-demand"' not in html  # no total presented as the estimate
    assert 'id="estimate-hourly-on-demand">$0.245<' in html
    cap = f"${168 * N1_4_HOURLY / 1e6:.2f}"
    assert f'id="estimate-cap-on-demand">{cap}<' in html
    assert f"At most {cap} on demand if it runs to its 7-day timeout" in html
    # Beside Submit: the rate, not the cap.
    status = re.search(r'<span id="compose-status".*?</span>\s*</span>', html, re.S)
    assert status and "$0.245/h" in status.group(0) and cap not in status.group(0)

    own = panel(member_client, timeout_hours="3", command="python -m mine", args="")
    assert "runs a command of its own" in own and "its 3 h timeout" in own


def test_with_a_run_time_the_estimate_is_a_total_and_the_cap_stays_labelled(
        member_client: Client, backend: Backend) -> None:
    response = member_client.post(reverse("job-validate"),
                                  {**form_data(timeout_hours="24"), "estimate_hours": "10"})
    html = response.content.decode()
    assert f'id="estimate-on-demand">${10 * N1_4_HOURLY / 1e6:.2f}<' in html
    assert 'id="estimate-no-run-time"' not in html and 'id="estimate-cap"' not in html


def test_model_fields_the_trainer_does_not_train_are_a_warning_with_its_own_figures(
        member_client: Client, backend: Backend) -> None:
    """Issue 33: a 7B plan composed for a job whose trainer trains --preset tiny validated
    without a word; the panel now says what the trainer trains and that the plan is another
    job's."""
    html = panel(member_client, strategy="fsdp", model_parameters_b="7", **A100_8)
    assert "The trainer trains a byte-level GPT (2 layers, width 64; --preset tiny), " \
           "120,576 parameters." in html
    assert "120,576 parameters, not the 7,000,000,000 of the model fields" in html
    # Fields that describe the trainer's model (rounded) are its plan, without a warning.
    html = panel(member_client, strategy="fsdp", model_parameters_b="0.00012", **A100_8)
    assert "The trainer trains a byte-level GPT" in html and 'id="warnings"' not in html
    # --set model.* makes the trainer's model the fields' size.
    html = panel(member_client, strategy="fsdp", model_parameters_b="0.0108",
                 args="--preset small --steps 20", **A100_8)
    assert "width 384; --preset small), 10,844,160 parameters" in html
    assert 'id="warnings"' not in html


def test_a_plan_for_a_teams_own_code_says_it_sizes_the_fields_as_entered(
        member_client: Client, backend: Backend) -> None:
    html = panel(member_client, strategy="fsdp", model_parameters_b="7",
                 image_uri="us-docker.pkg.dev/my-project/team/own-trainer:1",
                 command="python train.py", args="--epochs 1", **A100_8)
    assert "sizes the model entered in the model fields for your own code" in html
    assert "The trainer trains" not in html and 'id="warnings"' not in html
