from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "controlplane.runs"
    label = "runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The job page's own panels (logs and costs add theirs in their ready()).
        from controlplane.runs import views  # noqa: F401
