from typing import Any

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
        composer.DEFAULTS.tpu_images = lambda: {"tpu_jax": settings.CP_TPU_JAX_IMAGE,
                                                "tpu_xla": settings.CP_TPU_XLA_IMAGE}
        _strict_json_booleans()
        from django.db.backends.signals import connection_created

        from controlplane.core import db_times

        connection_created.connect(db_times.on_connection_created,
                                   dispatch_uid="core.db_times")


def _strict_json_booleans() -> None:
    """The API reads JSON only (REST_FRAMEWORK's parsers), so a boolean is true or false, as
    its schema says: DRF would also take 0, 1, "yes" or "on" (what HTML forms send), and answer
    200 to a body the schema calls invalid. (null reaches a field only where it allows null.)"""
    from rest_framework import fields

    def json_boolean(field: fields.BooleanField, data: object) -> bool:
        if not isinstance(data, bool):
            field.fail("invalid", input=data)
        return data

    fields.BooleanField.to_internal_value = json_boolean
    # And a number is not a boolean: float(False) and int(True) would pass.
    for number_field in (fields.IntegerField, fields.FloatField, fields.DecimalField):
        number_field.to_internal_value = _no_booleans(number_field.to_internal_value)


def _no_booleans(to_internal_value: Any) -> Any:
    def strict(field: Any, data: object) -> Any:
        if isinstance(data, bool):
            field.fail("invalid")
        return to_internal_value(field, data)
    return strict
