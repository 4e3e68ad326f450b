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
