"""How the job endpoints' bodies and answers read in the OpenAPI schema.

Every endpoint that takes a job takes it in either form: the compose form's fields
(JobRequestSerializer, unknown keys refused) or a Vertex CustomJob in its REST JSON, whose
fields Vertex's own rules judge (errors keyed by their dotted path). Only the schema reads this
module: the views validate with the serializers and compose.validation.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from controlplane.compose.estimates import MAX_HOURS
from controlplane.compose.serializers import JobRequestSerializer
from controlplane.core.serializers import StrictSerializer

# A duration may come as a JSON number or a decimal string ("2.5"), as Vertex's own int64s do.
DECIMAL_STRING = r"^[0-9]{1,12}(\.[0-9]{1,12})?$"


def _positive_number(maximum: float) -> dict:
    return {"oneOf": [{"type": "number", "minimum": 0, "exclusiveMinimum": True,
                       "maximum": maximum},
                      {"type": "string", "pattern": DECIMAL_STRING}]}


class CustomJobSerializer(serializers.Serializer):
    """A Vertex CustomJob in its REST JSON, e.g. what `gcloud ai custom-jobs describe
    --format=json` prints; ?team= and ?region= say where it goes."""

    # No maxLength here: Vertex's 128 characters is one of its rules, reported with the others.
    displayName = serializers.CharField(
        allow_blank=True, help_text="The job's name (Vertex takes at most 128 characters).")
    jobSpec = serializers.DictField(
        help_text="The CustomJobSpec: workerPoolSpecs, scheduling, baseOutputDirectory, ...")
    labels = serializers.DictField(child=serializers.CharField(allow_blank=True),
                                   required=False)


JOB_BODY = PolymorphicProxySerializer(
    component_name="JobBody", serializers=[JobRequestSerializer, CustomJobSerializer],
    resource_type_field_name=None)


@extend_schema_field(_positive_number(float(MAX_HOURS)))
class HoursField(serializers.Field):
    pass


@extend_schema_field(_positive_number(86400.0))
class StepTimeField(serializers.Field):
    pass


class EstimateRequestSerializer(JobRequestSerializer):
    """The job in the compose form's fields, and how long it runs: hours, or steps and
    step_time_s together; neither: until its timeout (what a budget reserves)."""

    hours = HoursField(required=False)
    steps = serializers.IntegerField(required=False, min_value=1, max_value=10**12)
    step_time_s = StepTimeField(required=False)


class EstimateCustomJobSerializer(CustomJobSerializer):
    region = serializers.CharField(required=False, max_length=40)
    hours = HoursField(required=False)
    steps = serializers.IntegerField(required=False, min_value=1, max_value=10**12)
    step_time_s = StepTimeField(required=False)


ESTIMATE_BODY = PolymorphicProxySerializer(
    component_name="EstimateBody",
    serializers=[EstimateRequestSerializer, EstimateCustomJobSerializer],
    resource_type_field_name=None)


class CustomJobSpecSerializer(serializers.Serializer):
    """A CustomJobSpec, as gcloud's --config file holds it (in JSON)."""

    workerPoolSpecs = serializers.ListField(child=serializers.DictField())


class ImportTextSerializer(StrictSerializer):
    text = serializers.CharField(help_text="gcloud --config YAML, or a CustomJob / "
                                           "CustomJobSpec in JSON or YAML.")


IMPORT_BODY = {
    "application/json": PolymorphicProxySerializer(
        component_name="ImportBody",
        serializers=[ImportTextSerializer, CustomJobSerializer, CustomJobSpecSerializer],
        resource_type_field_name=None),
    "application/yaml": OpenApiTypes.STR,
    "application/x-yaml": OpenApiTypes.STR,
    "text/plain": OpenApiTypes.STR,
}


class ImportedSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="CustomJob or CustomJobSpec")
    request = serializers.DictField(help_text="A body for POST /api/v1/jobs/.")
    errors = serializers.DictField(help_text="The document's errors keyed by its field paths.")
    warnings = serializers.ListField(child=serializers.CharField())
    valid = serializers.BooleanField()


class JobCheckSerializer(serializers.Serializer):
    """POST /api/v1/jobs/validate/'s answer."""

    valid = serializers.BooleanField(help_text="Whether POST /api/v1/jobs/ would accept it.")
    format = serializers.ChoiceField(choices=["request", "custom_job"])
    errors = serializers.DictField(help_text="Keyed by field path: why it would be refused.")
    warnings = serializers.DictField()
    suggestions = serializers.DictField()
    memory_policy = serializers.CharField(allow_null=True)
    memory_plan = serializers.DictField(allow_null=True)
    hints = serializers.ListField()
    world_size = serializers.IntegerField(allow_null=True)
    deepspeed_config = serializers.DictField(allow_null=True)
    request = serializers.DictField()
    custom_job = serializers.DictField(allow_null=True)
    estimate = serializers.DictField(allow_null=True, help_text="Integer micro-dollars.")
    quota = serializers.DictField(
        allow_null=True, help_text="The project's Vertex quota for each accelerator it needs.")
    queue = serializers.DictField(
        allow_null=True,
        help_text="With the queue in front of Vertex on: where the job would land "
                  "(where: admitted | waiting | refused; place, reason, earliest_start, stops, "
                  "note).")
