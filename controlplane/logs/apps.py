from django.apps import AppConfig


class LogsConfig(AppConfig):
    name = "controlplane.logs"
    label = "logs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connected here, not at import: the app registry is ready, and a lower app never
        # imports this one (controlplane/core/signals.py).
        from controlplane.core import signals
        from controlplane.logs import framework_lines, health, queries, receivers, views
        from controlplane.runs import panels

        panels.register("logs", "logs/partials/logs.html", views.log_panel)
        panels.register_report("diagnosis", queries.headline)
        panels.register_reports("diagnosis", queries.headlines)
        panels.register_report("mfu", queries.reports_mfu)
        panels.register_report("framework", framework_lines.report)
        signals.job_state_changed.connect(receivers.on_job_state_changed,
                                          dispatch_uid="logs.job_state_changed")
        signals.restarts_due.connect(receivers.on_restarts_due,
                                     dispatch_uid="logs.restarts_due")
        # Hang and straggler detection, in the reconcile sweep (its lease), for running jobs.
        signals.job_reconciled.connect(health.on_job_reconciled,
                                       dispatch_uid="logs.health")
        signals.jobs_reconciled.connect(receivers.on_jobs_reconciled,
                                        dispatch_uid="logs.jobs_reconciled")
