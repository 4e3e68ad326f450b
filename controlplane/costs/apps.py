from django.apps import AppConfig


class CostsConfig(AppConfig):
    name = "controlplane.costs"
    label = "costs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from controlplane.core import signals
        from controlplane.costs import goodput_views, receivers, spend, views
        from controlplane.runs import panels

        panels.register("cost", "costs/partials/cost.html", views.cost_panel)
        panels.register("goodput", "costs/partials/goodput.html", goodput_views.goodput_panel)
        panels.register_report("cost", spend.cost_report)
        panels.register_report("cost_so_far_micros", spend.cost_so_far_micros)
        signals.job_reconciled.connect(receivers.on_job_reconciled,
                                       dispatch_uid="costs.job_reconciled")
        signals.jobs_reconciled.connect(receivers.on_jobs_reconciled,
                                        dispatch_uid="costs.jobs_reconciled")
