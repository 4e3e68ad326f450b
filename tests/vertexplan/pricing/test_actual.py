"""Actual cost from stored facts (vertexplan.pricing.actual.job_cost), against figures worked out by
hand from vertex_training_prices.csv: billed running time only, at the attempt's own rate,
lost compute per preemption shown apart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal as D

from tests.vertexplan.pricing.factories import job, micros, pool
from vertexplan.pricing import Estimate, LineItem, Totals, UnitPrices
from vertexplan.pricing.actual import AttemptFacts, PreemptionFacts, job_cost, rate_of
from vertexplan.pricing.job_estimate import hourly
from vertexplan.pricing.snapshot import restore, snapshot

T0 = datetime(2026, 10, 1, 10, 0, tzinfo=UTC)
# n1-standard-4 in us-central1, on demand and spot, and its 100 GB pd-ssd boot disk.
N1_4 = micros(D("0.21849885"))
N1_4_SPOT = micros(D("0.09550985"))
PD_SSD_100 = micros(D("0.195494") * 100 / 730)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def spot_estimate(replicas: int = 1):
    # Through a stored snapshot and back, as the job's row keeps it.
    est = hourly(job(pool("n1-standard-4", replicas=str(replicas), disk=("pd-ssd", 100)),
                     strategy="SPOT"), "us-central1")
    return restore(snapshot(est))


def test_hand_figures_of_the_rates():
    assert (N1_4, N1_4_SPOT, PD_SSD_100) == (218_499, 95_510, 26_780)


def test_two_preemptions_queued_and_preempted_time_not_billed_lost_compute_apart():
    attempt = AttemptFacts(1, spot_estimate(), "spot", started_at=at(0), ended_at=at(60))
    preemptions = [
        # Preempted at 10:20, running again at 10:30; its newest checkpoint was saved 10:15.
        PreemptionFacts(1, "workerpool0-0", at(20), at(30), preserved_at=at(15)),
        # Preempted at 10:40, running again at 10:45; it resumes from the 10:35 checkpoint.
        PreemptionFacts(1, "workerpool0-0", at(40), at(45), preserved_at=at(35)),
    ]
    cost = job_cost([attempt], preemptions, {0: 1}, now=at(90))
    # 60 minutes from start to end, less 10 + 5 minutes preempted: 45 minutes billed.
    machine = (N1_4_SPOT * 45 + 30) // 60  # 71_632.5 -> half-up
    disk = PD_SSD_100 * 45 // 60
    assert (machine, disk) == (71_633, 20_085)
    assert [line.cost for line in cost.lines] == [machine, disk]
    assert cost.billed == 91_718
    assert [line.billed for line in cost.lines] == [timedelta(minutes=45)] * 2
    # Each preemption threw away 5 minutes of work (10:15-10:20 and 10:35-10:40).
    per_preemption = ((N1_4_SPOT + PD_SSD_100) * 5 * 2 + 60) // (60 * 2)  # 10_190.83 -> up
    assert per_preemption == 10_191
    assert [p.lost for p in cost.preemptions] == [per_preemption, per_preemption]
    assert [p.lost_time for p in cost.preemptions] == [timedelta(minutes=5)] * 2
    assert [p.not_billed for p in cost.preemptions] == [timedelta(minutes=10),
                                                        timedelta(minutes=5)]
    assert cost.lost == 20_382
    assert cost.useful == 91_718 - 20_382
    assert cost.attempts[0].running == timedelta(minutes=60)


def test_queued_time_before_the_start_is_not_billed_and_a_running_job_costs_so_far():
    attempt = AttemptFacts(1, spot_estimate(), "spot", started_at=at(30), ended_at=None)
    cost = job_cost([attempt], [], {0: 1}, now=at(60))
    assert cost.billed == (N1_4_SPOT + 1) // 2 + PD_SSD_100 // 2 == 47_755 + 13_390
    never_started = AttemptFacts(2, spot_estimate(), "spot", started_at=None, ended_at=None)
    assert job_cost([never_started], [], {0: 1}, now=at(60)).billed == 0


def test_a_checkpoint_written_after_the_notice_keeps_the_work():
    attempt = AttemptFacts(1, spot_estimate(), "spot", started_at=at(0), ended_at=at(60))
    emergency = PreemptionFacts(1, "workerpool0-0", at(20), at(30), preserved_at=at(20.5))
    cost = job_cost([attempt], [emergency], {0: 1}, now=at(60))
    assert cost.lost == 0 and cost.preemptions[0].lost_time == timedelta(0)


def test_without_a_checkpoint_in_the_run_the_whole_run_is_lost():
    attempt = AttemptFacts(1, spot_estimate(), "spot", started_at=at(0), ended_at=at(60))
    rows = [PreemptionFacts(1, "workerpool0-0", at(20), at(30), preserved_at=None),
            # Resumed at 10:30 from a checkpoint of 10:10, before this run began.
            PreemptionFacts(1, "workerpool0-0", at(42), at(45), preserved_at=at(10))]
    cost = job_cost([attempt], rows, {0: 1}, now=at(60))
    assert [p.lost_time for p in cost.preemptions] == [timedelta(minutes=20),
                                                       timedelta(minutes=12)]


def test_a_preemption_of_one_of_two_workers_removes_half_of_the_pools_price():
    attempt = AttemptFacts(1, spot_estimate(replicas=2), "spot", started_at=at(0),
                           ended_at=at(60))
    row = PreemptionFacts(1, "workerpool0-1", at(0), at(30), preserved_at=None)
    cost = job_cost([attempt], [row], {0: 2}, now=at(60))
    machine_line = cost.lines[0]
    assert machine_line.quantity == 2 and machine_line.hourly == 2 * N1_4_SPOT
    # Replica 0 ran 60 minutes, replica 1 30: the pool's two machines billed 45 minutes each.
    assert machine_line.cost == 2 * N1_4_SPOT * 45 // 60 == 143_265
    assert cost.preemptions[0].lost == 0  # preempted at once: nothing done yet


def test_each_attempt_at_its_own_rate_and_a_system_failure_is_not_billed():
    spot = AttemptFacts(1, spot_estimate(), rate_of("SPOT"), started_at=at(0),
                        ended_at=at(60), system_failure=True)
    standard = AttemptFacts(2, spot_estimate(), rate_of("STANDARD"), started_at=at(70),
                            ended_at=at(130))
    cost = job_cost([spot, standard], [], {0: 1}, now=at(200))
    assert [a.billed for a in cost.attempts] == [0, N1_4 + PD_SSD_100]
    assert cost.billed == 245_279
    assert [a.rate for a in cost.attempts] == ["spot", "on_demand"]
    assert cost.by_resource() == {"n1-standard-4": N1_4, "pd-ssd": PD_SSD_100}


def test_a_rate_the_snapshot_lacks_is_billed_on_demand_and_says_so():
    # A T4 cannot run FLEX_START: a flex attempt of such a snapshot is billed on demand.
    est = restore(snapshot(hourly(job(pool("n1-standard-4", "NVIDIA_TESLA_T4", 1)),
                                  "us-central1")))
    attempt = AttemptFacts(1, est, "flex", started_at=at(0), ended_at=at(60))
    cost = job_cost([attempt], [], {0: 1}, now=at(60))
    assert cost.billed == est.hourly.on_demand
    assert any("no flex price" in note for note in cost.notes)


# -- the billing rules on an a2-highgpu-8g with its 100 GB pd-ssd boot disk ---------------------

A2_RATE = 33_822_739  # on demand in us-central1, micro-dollars per hour: machine + disk lines
A2_MACHINE, A2_DISK = 33_795_959, 26_780


def a2_attempt(number: int, start: datetime, end: datetime | None,
               system_failure: bool = False) -> AttemptFacts:
    est = restore(snapshot(hourly(job(pool("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8,
                                           disk=("pd-ssd", 100))), "us-central1")))
    assert [line.hourly.on_demand for line in est.lines] == [A2_MACHINE, A2_DISK]
    assert est.hourly.on_demand == A2_RATE
    return AttemptFacts(number, est, "on_demand", started_at=start, ended_at=end,
                        system_failure=system_failure)


def one_line_estimate(micros_per_hour: int) -> Estimate:
    """An estimate of a single line at a chosen hourly figure, for the rounding edges."""
    line = LineItem(pool=0, role="chief", resource="machine", name="m", quantity=1, unit="hour",
                    unit_prices=UnitPrices(D(micros_per_hour) / 10**6, None, None),
                    hourly=Totals(micros_per_hour, None, None), source="test",
                    retrieved="2026-01")
    return Estimate(region="us-central1", strategy="STANDARD", lines=(line,), notes=(),
                    table_source="test")


def test_queued_and_preempted_time_is_not_billed():
    # Queued 10:00-10:45 (before its start), ran 60 minutes, preempted for 35, ran 30 more.
    attempt = a2_attempt(1, at(45), at(170))
    preempted = PreemptionFacts(1, "workerpool0-0", at(105), at(140), preserved_at=at(105))
    cost = job_cost([attempt], [preempted], {0: 1}, now=at(200))
    assert [line.billed for line in cost.lines] == [timedelta(minutes=90)] * 2
    # 1.5 h of each line, each rounded half-up: 50_693_938.5 -> 50_693_939, and 40_170.
    assert [line.cost for line in cost.lines] == [50_693_939, 40_170]
    assert cost.billed == 50_734_109
    # The same as 90 minutes that were never interrupted.
    straight = job_cost([a2_attempt(1, at(0), at(90))], [], {0: 1}, now=at(200))
    assert straight.billed == cost.billed


def test_an_attempt_that_failed_through_no_fault_of_the_user_is_not_billed():
    failed = a2_attempt(1, at(0), at(20), system_failure=True)
    retried = a2_attempt(2, at(20), at(80))
    cost = job_cost([failed, retried], [], {0: 1}, now=at(80))
    assert cost.billed == A2_RATE
    assert [a.billed for a in cost.attempts] == [0, A2_RATE]


def test_per_second_arithmetic_is_exact_with_one_half_up_rounding_per_line():
    second = T0 + timedelta(seconds=1)
    # 33_795_959 x 1 s / 3600 = 9_387.76 -> 9_388; 26_780 / 3600 = 7.44 -> 7
    cost = job_cost([a2_attempt(1, T0, second)], [], {0: 1}, now=second)
    assert [line.cost for line in cost.lines] == [9_388, 7]
    # 3_601 s is rounded once, not 3_601 x the one-second figure: 33_805_347.3 and 26_787.4.
    odd = T0 + timedelta(seconds=3_601)
    cost = job_cost([a2_attempt(1, T0, odd)], [], {0: 1}, now=odd)
    assert [line.cost for line in cost.lines] == [33_805_347, 26_787]
    assert cost.billed == 33_832_134

    def billed(micros_per_hour: int, seconds: float) -> int:
        end = T0 + timedelta(seconds=seconds)
        attempt = AttemptFacts(1, one_line_estimate(micros_per_hour), "on_demand",
                               started_at=T0, ended_at=end)
        return job_cost([attempt], [], {0: 1}, now=end).billed

    # Exactly half a micro-dollar rounds up: 1_800 micro-dollars/h for 1 s = 0.5.
    assert billed(1_800, 1) == 1
    assert billed(1_799, 1) == 0
    # Sub-second time counts to the microsecond.
    assert billed(7_200, 0.5) == 1


def test_the_same_preemption_reported_twice_is_counted_once():
    attempt = a2_attempt(1, at(0), at(120))
    preempted = PreemptionFacts(1, "workerpool0-0", at(60), at(75), preserved_at=at(40))
    once = job_cost([attempt], [preempted], {0: 1}, now=at(120))
    twice = job_cost([attempt], [preempted, preempted], {0: 1}, now=at(120))
    assert (twice.billed, twice.lost) == (once.billed, once.lost)
    assert [line.billed for line in twice.lines] == [timedelta(minutes=105)] * 2


def test_no_attempts_cost_nothing():
    cost = job_cost([], [], {}, now=at(60))
    assert (cost.billed, cost.lost, cost.useful) == (0, 0, 0)
    assert cost.lines == () and cost.attempts == ()


def test_lost_compute_is_the_time_since_the_last_checkpoint_shown_apart_from_useful_work():
    attempt = a2_attempt(1, at(0), at(135))
    # Preempted at 11:00, 20 minutes after its 10:40 checkpoint; running again at 11:15.
    preempted = PreemptionFacts(1, "workerpool0-0", at(60), at(75), preserved_at=at(40))
    cost = job_cost([attempt], [preempted], {0: 1}, now=at(135))
    assert cost.billed == 2 * A2_RATE  # 120 of the 135 minutes
    assert cost.preemptions[0].lost_time == timedelta(minutes=20)
    # A third of the hourly rate: 11_274_246.33 -> 11_274_246.
    assert cost.lost == cost.preemptions[0].lost == 11_274_246
    assert cost.useful == cost.billed - cost.lost


def test_an_attempt_recorded_as_ending_before_it_started_costs_nothing():
    cost = job_cost([a2_attempt(1, at(10), at(0))], [], {0: 1}, now=at(60))
    assert cost.billed == 0
    assert cost.attempts[0].running == timedelta(0)
