"""A team's monthly budget and the record of each time its spend crossed it."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

# The largest budget accepted: just under a trillion dollars a month, what the page's 12 digits
# of dollars allow, and well inside PostgreSQL's bigint.
MAX_BUDGET_MICROS = 999_999_999_999_990_000


class BudgetAction(models.TextChoices):
    CANCEL = "cancel", "Cancel the team's running jobs"
    NOTIFY = "notify", "Only notify"


class TeamBudget(models.Model):
    """The most a team may spend on training in one calendar month (UTC), in micro-dollars."""

    team = models.OneToOneField("teams.Team", on_delete=models.CASCADE, primary_key=True,
                                related_name="budget")
    monthly_micros = models.BigIntegerField(
        help_text="Integer micro-dollars (1 USD = 1000000).")
    on_exceed = models.CharField(max_length=10, choices=BudgetAction.choices,
                                 default=BudgetAction.NOTIFY)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "jobs_teambudget"  # kept from the app it was first created in

    def __str__(self) -> str:
        return f"budget of {self.team}"


class BudgetCrossing(models.Model):
    """The month's spend went past the budget: acted on once. Keyed by the budget in force, so
    raising the budget and crossing it again acts again, and nothing else does."""

    team = models.ForeignKey("teams.Team", on_delete=models.CASCADE,
                             related_name="budget_crossings")
    month = models.DateField()  # the first day of the month
    monthly_micros = models.BigIntegerField()
    spent_micros = models.BigIntegerField()
    action = models.CharField(max_length=10, choices=BudgetAction.choices)
    jobs = models.JSONField(default=list)  # ids of the jobs cancelled or notified
    crossed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "jobs_budgetcrossing"  # kept from the app it was first created in
        ordering = ["-crossed_at"]
        constraints = [
            models.UniqueConstraint(fields=["team", "month", "monthly_micros"],
                                    name="one_crossing_per_budget_and_month"),
        ]

    def __str__(self) -> str:
        return f"{self.team} over budget in {self.month:%Y-%m}"


class EndedGoodput(models.Model):
    """An ended job's goodput, computed once (controlplane/costs/goodput_cache.py): a team's
    month reads this one row instead of every step of the job. Keyed by the attempt the job
    ended on and when: a job that runs again (a resubmission) is computed afresh."""

    job = models.OneToOneField("runs.Job", on_delete=models.CASCADE, primary_key=True,
                               related_name="ended_goodput")
    attempt = models.PositiveIntegerField()
    ended_at = models.DateTimeField()
    # vertexplan.goodput.Goodput, priced with the job's bill (goodput_cache.as_data).
    split = models.JSONField()
    computed_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"goodput of job {self.job_id}"
