from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "controlplane.teams"
    label = "teams"
    default_auto_field = "django.db.models.BigAutoField"
