from django.apps import AppConfig


class SecurityConfig(AppConfig):
    name = "controlplane.security"
    label = "security"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the token scheme with drf-spectacular, so the schema describes it.
        from controlplane.security import schema  # noqa: F401
