from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "controlplane.core"
    label = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The composer is pure Python: it learns the deployment's defaults from the settings,
        # read at each call (tests and operators change them at run time).
        from django.conf import settings

        from vertexplan import composer

        composer.DEFAULTS.region = lambda: settings.VERTEX_REGION
        composer.DEFAULTS.image = lambda: settings.CP_DEFAULT_IMAGE
