from django.apps import AppConfig


class ComposeConfig(AppConfig):
    name = "controlplane.compose"
    label = "compose"
    default_auto_field = "django.db.models.BigAutoField"
