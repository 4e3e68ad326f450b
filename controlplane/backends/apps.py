from django.apps import AppConfig


class BackendsConfig(AppConfig):
    name = "controlplane.backends"
    label = "backends"
    default_auto_field = "django.db.models.BigAutoField"
