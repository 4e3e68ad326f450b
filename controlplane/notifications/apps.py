from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "controlplane.notifications"
    label = "notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from controlplane.core import signals
        from controlplane.notifications import receivers

        for signal, receiver in (
            (signals.job_state_changed, receivers.on_job_state_changed),
            (signals.attempt_submitted, receivers.on_attempt_submitted),
            (signals.budget_crossed, receivers.on_budget_crossed),
            (signals.queue_wait_long, receivers.on_queue_wait_long),
            (signals.restart_recorded, receivers.on_restart_recorded),
            (signals.job_health_changed, receivers.on_job_health_changed),
            (signals.slo_alert_raised, receivers.on_slo_alert_raised),
            (signals.cluster_idle_flagged, receivers.on_cluster_idle_flagged),
            (signals.cluster_idle_deleted, receivers.on_cluster_idle_deleted),
        ):
            signal.connect(receiver, dispatch_uid=f"notifications.{receiver.__name__}")
