from django.apps import AppConfig


class LogsConfig(AppConfig):
    name = "controlplane.logs"
    label = "logs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connected here, not at import: the app registry is ready, and a lower app never
        # imports this one (controlplane/core/signals.py).
        from controlplane.core import signals
        from controlplane.logs import receivers, views
        from controlplane.runs import panels

        panels.register("logs", "logs/partials/logs.html", views.log_panel)
        signals.restarts_due.connect(receivers.on_restarts_due,
                                     dispatch_uid="logs.restarts_due")
