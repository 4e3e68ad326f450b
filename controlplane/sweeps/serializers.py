"""The REST shape of sweeps and trials: fields listed one by one."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.sweeps import links
from controlplane.sweeps.models import Sweep, Trial


class TrialSerializer(serializers.ModelSerializer):
    best = serializers.SerializerMethodField()
    objective = serializers.SerializerMethodField()
    custom_job_id = serializers.CharField(read_only=True)
    links = serializers.SerializerMethodField(
        help_text="key -> URL: the trial's CustomJob as a job's links name them (console, "
                  "logs, errors, gpu_utilisation, gpu_memory, and tensorboard, experiment, "
                  "experiment_run when the trial job spec names them); against the emulator, "
                  "the product's own pages")

    class Meta:
        model = Trial
        fields = ["trial_id", "state", "parameters", "final_metrics", "final_step",
                  "objective", "best", "measurements", "custom_job", "custom_job_id",
                  "infeasible_reason", "started_at", "ended_at", "links"]

    def get_links(self, trial: Trial) -> dict[str, str]:
        return {link.key: link.url for link in links.for_trial(trial.sweep, trial)}

    def get_best(self, trial: Trial) -> bool:
        best = self.context.get("best_trial_id")
        return best is not None and trial.trial_id == best

    def get_objective(self, trial: Trial) -> float | None:
        return trial.objective


class SweepListSerializer(serializers.ModelSerializer):
    team = serializers.CharField(source="team.slug", read_only=True)
    max_trial_count = serializers.SerializerMethodField()
    parallel_trial_count = serializers.SerializerMethodField()

    class Meta:
        model = Sweep
        fields = ["id", "name", "team", "state", "metric_id", "goal", "max_trial_count",
                  "parallel_trial_count", "region", "created_at", "started_at", "ended_at",
                  "estimate_micros", "cost_micros", "error_message"]

    def get_max_trial_count(self, sweep: Sweep) -> int | None:
        return sweep.tuning_job.get("maxTrialCount")

    def get_parallel_trial_count(self, sweep: Sweep) -> int | None:
        return sweep.tuning_job.get("parallelTrialCount")


class SweepSerializer(SweepListSerializer):
    trials = serializers.SerializerMethodField()
    best_trial = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField(
        help_text="key -> URL: the tuning job in the Vertex console (the sweep's page against "
                  "the emulator)")

    class Meta(SweepListSerializer.Meta):
        fields = [*SweepListSerializer.Meta.fields, "vertex_name", "vertex_state",
                  "estimate_trial_hours", "trial_hourly_micros", "request", "tuning_job",
                  "best_trial", "trials", "links"]

    def get_links(self, sweep: Sweep) -> dict[str, str]:
        return {link.key: link.url for link in links.for_sweep(sweep)}

    def _best(self, sweep: Sweep) -> Trial | None:
        if "best" not in self.context:
            self.context["best"] = sweep.best_trial()
        return self.context["best"]

    def get_best_trial(self, sweep: Sweep) -> str | None:
        best = self._best(sweep)
        return best.trial_id if best else None

    def get_trials(self, sweep: Sweep) -> list[dict[str, Any]]:
        best = self._best(sweep)
        context = {**self.context, "best_trial_id": best.trial_id if best else None}
        return TrialSerializer(sweep.trials.all(), many=True, context=context).data
