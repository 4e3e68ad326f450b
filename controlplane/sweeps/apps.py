from django.apps import AppConfig


class SweepsConfig(AppConfig):
    name = "controlplane.sweeps"
    label = "sweeps"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A trial's job page and API record say which sweep it is part of (runs may not
        # import sweeps).
        from controlplane.runs import panels
        from controlplane.sweeps import trial_jobs

        panels.register_report("origin-trial", trial_jobs.origin)

        # A sweep's trials are billed as the sweep's: its spend (and, while it runs, its
        # estimate) counts in its team's month, for budgets and the costs page.
        from controlplane.costs import budgets, spend
        from controlplane.sweeps import budget as sweep_budget
        from controlplane.sweeps import spend as sweep_spend

        spend.register_spend("sweeps", sweep_spend.month_micros,
                             committed=sweep_spend.month_committed)
        spend.register_spend_series("sweeps", sweep_spend.month_series)
        # When that month's spend crosses the budget, running sweeps are cancelled or told,
        # as the team chose for its jobs.
        budgets.register_running("sweeps", sweep_budget.on_budget_crossed)
