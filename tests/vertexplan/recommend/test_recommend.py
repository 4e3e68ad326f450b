"""The recommender (vertexplan.recommend): the cheapest configurations that fit, ranked by cost,
each a job request the composer accepts; priced in the region asked; spot and flex only where valid;
nothing, with the reason, when nothing fits."""

from __future__ import annotations

from decimal import Decimal as D
from fractions import Fraction

import pytest

from tests.vertexplan.composer.helpers import compose_request
from vertexplan import catalog
from vertexplan.memory import ModelShape
from vertexplan.perf.scaling import scaling_efficiency
from vertexplan.pricing import PricingError, default_table, flex, job_estimate
from vertexplan.recommend import Query, Recommendation, Workload, peak_tflops, recommend
from vertexplan.recommend.alternatives import BASIS, alternatives
from vertexplan.recommend.throughput import supports_precision

SEVEN_B = ModelShape(parameters=7_000_000_000, dtype="bf16")
SMALL = ModelShape(parameters=100_000_000, dtype="bf16")


def query(model: ModelShape | None = SEVEN_B, **changes: object) -> Query:
    values: dict[str, object] = {"model": model, "strategy": "any", "region": "us-central1",
                                 "workload": Workload(hours=D(10))}
    values.update(changes)
    return Query(**values)  # type: ignore[arg-type]


def priced_as_composed(result: Recommendation, region: str) -> job_estimate.Estimate:
    composition = compose_request(result.request)
    assert composition.ok, (result.label, composition.errors)
    return job_estimate.hourly(composition.custom_job, region, default_table())


QUERIES = {
    "any-7b-hours": query(limit=20),
    "zero3-7b-europe": query(strategy="zero3", region="europe-west4"),
    "fsdp-steps-deadline": query(strategy="fsdp", workload=Workload(
        steps=20_000, step_time_s=D("1.5"), reference_device="NVIDIA_TESLA_A100",
        reference_devices=8, deadline_hours=D(24))),
    "tpu-xla-7b": query(strategy="tpu_xla", limit=20),
    "ddp-small-asia": query(SMALL, strategy="ddp", region="asia-southeast1", limit=30),
    "fp32-with-shape": query(ModelShape(1_300_000_000, "fp32", hidden_size=2048, layers=24,
                                        sequence_length=2048, micro_batch_size=2),
                             strategy="zero2"),
}


@pytest.mark.parametrize("name", QUERIES)
def test_every_result_is_a_job_the_composer_accepts_and_that_fits(name: str) -> None:
    q = QUERIES[name]
    found = recommend(q)
    assert found.results, found.reason
    assert len(found.results) <= q.limit
    for result in found.results:
        composition = compose_request(result.request)
        assert composition.ok, (result.label, composition.errors)
        plan = composition.memory_plan
        assert plan is not None and plan.fits, result.label
        assert plan.total_gib <= plan.device_memory_gib
        assert result.request["region"] == q.region
        assert result.request["strategy"] in ((q.strategy,) if q.strategy != "any" else
                                              ("ddp", "zero2", "fsdp", "zero3"))


@pytest.mark.parametrize("name", QUERIES)
def test_results_are_ranked_by_total_cost_then_by_fewer_devices(name: str) -> None:
    results = recommend(QUERIES[name]).results
    keys = [(r.total, r.hardware.devices) for r in results]
    assert keys == sorted(keys)
    assert [r.rank for r in results] == list(range(1, len(results) + 1))


@pytest.mark.parametrize("name", QUERIES)
def test_costs_are_the_composed_jobs_price_for_the_duration(name: str) -> None:
    q = QUERIES[name]
    for result in recommend(q).results:
        hourly = priced_as_composed(result, q.region).hourly
        assert result.hourly == hourly
        seconds = result.seconds
        hourly = job_estimate.hourly(compose_request(result.request).custom_job, q.region,
                                     default_table())
        expected = job_estimate.for_steps(hourly, 1, seconds)
        assert result.totals == expected
        assert result.total == expected.get(result.rate)


def test_the_first_result_is_the_cheapest_valid_configuration_that_fits() -> None:
    # Brute force over every single-node GPU combination, judged by the composer itself.
    cheapest = None
    for machine, combos in catalog.get_catalog().combinations.items():
        for accelerator, counts in combos.items():
            if catalog.get_accelerator(accelerator).kind != "gpu" or \
                    catalog.get_accelerator(accelerator).deprecated:
                continue
            if not supports_precision(accelerator, "bf16"):
                continue  # never proposed for a bf16 model
            for count in counts:
                request = {"name": "probe", "strategy": "ddp", "precision": "bf16",
                           "region": "us-central1", "timeout_hours": 13,
                           "model": {"parameters": SMALL.parameters},
                           "chief": {"machine_type": machine, "accelerator_type": accelerator,
                                     "accelerator_count": count}}
                composition = compose_request(request)
                if not composition.ok:
                    continue
                try:
                    estimate = job_estimate.hourly(composition.custom_job, "us-central1",
                                            default_table())
                except PricingError:
                    continue
                total = job_estimate.for_duration(estimate, 10).on_demand
                if cheapest is None or total < cheapest[0]:
                    cheapest = (total, machine, accelerator, count)
    assert cheapest is not None
    best = recommend(query(SMALL, strategy="ddp", max_nodes=1,
                           schedules=("STANDARD",))).results[0]
    assert best.total == cheapest[0]
    assert best.hardware.device == cheapest[2]
    assert best.hardware.accelerator_count == cheapest[3]


def test_region_prices_decide_the_costs_and_unpriced_hardware_is_left_out() -> None:
    unpriced_in_asia = {"NVIDIA_TESLA_V100", "NVIDIA_TESLA_P100", "NVIDIA_H200_141GB"}
    wide = dict(strategy="ddp", schedules=("STANDARD",), limit=50, max_nodes=2)
    fp32 = ModelShape(parameters=SMALL.parameters, dtype="fp32")  # V100 and P100 run it
    us = recommend(query(fp32, region="us-central1", **wide)).results
    asia = recommend(query(fp32, region="asia-southeast1", **wide)).results
    assert unpriced_in_asia & {r.hardware.device for r in us}
    assert not unpriced_in_asia & {r.hardware.device for r in asia}
    by_hardware = {r.hardware: r for r in us}
    differ = 0
    for result in asia:
        assert result.hourly == priced_as_composed(result, "asia-southeast1").hourly
        twin = by_hardware.get(result.hardware)
        if twin is not None and twin.total != result.total:
            differ += 1
    assert differ, "asia-southeast1 and us-central1 prices differ for the same hardware"


def test_spot_only_where_a_spot_rate_applies_and_never_on_a_tpu_pod() -> None:
    found = recommend(query(strategy="tpu_xla", limit=50)).results
    assert {r.scheduling_strategy for r in found} >= {"STANDARD", "SPOT"}
    for result in found:
        assert result.scheduling_strategy != "FLEX_START"  # no TPU runs FLEX_START
        if result.hardware.is_tpu_pod:
            assert result.scheduling_strategy == "STANDARD"
            assert result.totals.spot is None
        if result.scheduling_strategy == "SPOT":
            assert result.totals.spot is not None and not result.hardware.is_tpu_pod


def test_flex_start_only_where_a_published_rate_prices_it_and_only_on_its_gpus() -> None:
    found = recommend(query(limit=50)).results
    # The shipped data has no FLEX_START rate: it is never offered at the on-demand rate.
    assert not [r for r in found if r.scheduling_strategy == "FLEX_START"]
    rates = flex.parse("kind,name,region,unit,flex_usd,source,retrieved\n"
                       "machine,a2-ultragpu-8g,us-central1,hour,0.5,a test figure,2026-11-24\n"
                       "machine,n1-standard-8,us-central1,hour,0.2,a test figure,2026-11-24\n")
    flex_found = [r for r in recommend(query(limit=50), flex_rates=rates).results
                  if r.scheduling_strategy == "FLEX_START"]
    assert flex_found
    for result in flex_found:
        assert result.hardware.machine_type == "a2-ultragpu-8g"
        assert result.totals.flex < result.totals.on_demand
    standard_only = recommend(query(schedules=("STANDARD",), limit=50)).results
    assert {r.scheduling_strategy for r in standard_only} == {"STANDARD"}
    # The same hardware costs less on spot than on demand: spot results come first.
    assert found[0].scheduling_strategy == "SPOT"


def test_a_bf16_model_is_never_proposed_on_a_device_without_bf16() -> None:
    found = recommend(query(SEVEN_B, strategy="any", limit=50, max_nodes=4)).results
    assert found
    assert not {"NVIDIA_TESLA_T4", "NVIDIA_TESLA_V100", "NVIDIA_TESLA_P100",
                "NVIDIA_TESLA_P4"} & {r.hardware.device for r in found}


def test_more_nodes_keep_less_of_their_throughput_on_a_slower_network() -> None:
    assert scaling_efficiency("a2-highgpu", 1) == 1
    assert scaling_efficiency("a3-megagpu", 4) > scaling_efficiency("a2-highgpu", 4) > \
        scaling_efficiency("n1-standard", 4)
    workload = Workload(steps=1000, step_time_s=D("3.6"), reference_device="NVIDIA_TESLA_A100",
                        reference_devices=8)
    one, two = (next(r for r in recommend(query(workload=workload, limit=200, max_nodes=2))
                     .results if r.hardware.machine_type == "a2-highgpu-8g"
                     and r.hardware.nodes == n) for n in (1, 2))
    assert one.hours == 1
    assert two.seconds > one.seconds / 2  # not perfect scaling


def test_step_time_scales_with_aggregate_peak_throughput() -> None:
    # 1000 steps of 3.6 s on 8 A100 = 1 hour there.
    workload = Workload(steps=1000, step_time_s=D("3.6"), reference_device="NVIDIA_TESLA_A100",
                        reference_devices=8)
    for result in recommend(query(workload=workload, limit=50)).results:
        hw = result.hardware
        ratio = Fraction(8) * peak_tflops("NVIDIA_TESLA_A100") / (
            hw.devices * peak_tflops(hw.device)
            * scaling_efficiency(hw.series, hw.nodes, tpu=hw.is_tpu))
        assert result.seconds == 3600 * ratio
        if result.hardware.device == "NVIDIA_TESLA_A100" and result.hardware.devices == 8 \
                and result.hardware.nodes == 1:
            assert result.hours == 1


def test_a_deadline_drops_the_slow_configurations() -> None:
    workload = Workload(steps=1000, step_time_s=D("36"), reference_device="NVIDIA_TESLA_A100",
                        reference_devices=8, deadline_hours=D(2))
    found = recommend(query(workload=workload, limit=30))
    assert found.results and found.rejected["deadline"]
    assert all(r.seconds <= 2 * 3600 for r in found.results)
    for result in found.results:
        assert compose_request(result.request).request.timeout_hours == 2


def test_nothing_fits_gives_no_results_and_says_why() -> None:
    found = recommend(query(ModelShape(2_000_000_000_000, "bf16"), strategy="ddp"))
    assert found.results == []
    assert "do not fit 2,000,000,000,000 parameters" in found.reason
    assert "the closest" in found.reason and "GB per device" in found.reason
    assert "zero3" in found.reason  # what to try

    late = recommend(query(workload=Workload(
        steps=100_000, step_time_s=D(10), reference_device="NVIDIA_TESLA_T4",
        deadline_hours=D("0.001"))))
    assert late.results == []
    assert "deadline" in late.reason and "the fastest" in late.reason


@pytest.mark.parametrize("strategy", ["tpu_jax", "tpu_xla"])
def test_a_tpu_job_runs_its_built_in_trainer(strategy: str) -> None:
    found = recommend(query(strategy=strategy)).results
    assert found
    for result in found:
        assert result.hardware.kind == "tpu"
        assert "command" not in result.request and "image_uri" not in result.request
        assert not any("your own image" in n for n in result.notes)
        composed = compose_request(result.request)
        assert composed.ok, composed.errors
        assert not composed.warnings.get("strategy")


def test_a_gpu_jobs_alternatives_are_comparable_tpu_slices_the_composer_accepts() -> None:
    job = compose_request({"name": "a100", "strategy": "zero3", "precision": "bf16",
                   "region": "us-central1", "model": {"parameters": 7_000_000_000},
                   "chief": {"machine_type": "a2-highgpu-8g",
                             "accelerator_type": "NVIDIA_TESLA_A100",
                             "accelerator_count": 8}})
    assert job.ok
    found = alternatives(job, Fraction(36_000), default_table())
    assert found
    aggregate = 8 * peak_tflops("NVIDIA_TESLA_A100")
    for alt in found:
        # The built-in JAX trainer, which runs; not PyTorch/XLA, which has no built-in trainer.
        assert alt.hardware.kind == "tpu" and alt.strategy == "tpu_jax"
        assert "command" not in alt.request and "image_uri" not in alt.request
        assert aggregate / 2 <= alt.hardware.devices * peak_tflops(alt.hardware.device) \
            <= aggregate * 2
        assert alt.seconds == 36_000 * aggregate / (
            alt.hardware.devices * peak_tflops(alt.hardware.device))
        assert compose_request(alt.request).ok
    assert len({a.hardware for a in found}) == len(found)


def test_the_alternatives_say_why_jax_and_not_pytorch_xla() -> None:
    assert "built-in JAX trainer (tpu_jax)" in BASIS and "it runs" in BASIS
    assert "PyTorch/XLA trainer (tpu_xla) runs the same model" in BASIS
    assert "JAX is proposed as the better-utilised TPU framework" in BASIS


def test_a_gpu_job_with_its_own_command_keeps_it_on_the_tpu() -> None:
    job = compose_request({"name": "own", "strategy": "ddp", "region": "us-central1",
                   "image_uri": "us-docker.pkg.dev/p/r/train:1", "command": ["python", "t.py"],
                   "chief": {"machine_type": "a2-highgpu-8g",
                             "accelerator_type": "NVIDIA_TESLA_A100",
                             "accelerator_count": 8}})
    assert job.ok, job.errors
    found = alternatives(job, Fraction(3600), default_table())
    assert found
    for alt in found:
        assert alt.strategy == "tpu_jax"
        assert alt.request["command"] == ["python", "t.py"]
        assert alt.request["image_uri"] == "us-docker.pkg.dev/p/r/train:1"
        assert compose_request(alt.request).ok


def test_a_cpu_job_has_no_alternatives() -> None:
    job = compose_request({"name": "cpu", "chief": {"machine_type": "n1-standard-4"}})
    assert alternatives(job, Fraction(3600), default_table()) == []


@pytest.mark.parametrize("bad", [
    {"strategy": "megatron"}, {"schedules": ("PREEMPTIBLE",)}, {"max_nodes": 0}])
def test_a_bad_query_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        query(**bad)


def test_a_workload_needs_hours_or_steps_on_a_known_device() -> None:
    with pytest.raises(ValueError):
        Workload()
    with pytest.raises(ValueError):
        Workload(hours=D(1), steps=10, step_time_s=D(1), reference_device="NVIDIA_L4")
    with pytest.raises(ValueError, match="no throughput figure"):
        Workload(steps=10, step_time_s=D(1), reference_device="NVIDIA_TESLA_K80")
