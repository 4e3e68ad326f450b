"""What every API serializer of the control plane shares."""

from __future__ import annotations

import difflib
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from vertexplan import checkpointing
from vertexplan.catalog.storage import PERSISTENT_DISK_ANSWER
from vertexplan.composer.request import PERSISTENT_DISK_WORDS


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know, so a typo is an error instead of a silent default."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                errors: dict[str, Any] = {key: [_unknown(key, self.fields)] for key in unknown}
                # The known fields are checked too, so unknown keys deeper in (a typo inside
                # "chief") are reported in the same answer, each on its own path.
                try:
                    super().to_internal_value({k: v for k, v in data.items()
                                               if k not in unknown})
                except serializers.ValidationError as exc:
                    if isinstance(exc.detail, dict):
                        errors.update(exc.detail)
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


def _unknown(key: str, fields: Any) -> str:
    if key in PERSISTENT_DISK_WORDS:
        return f"{key}: {PERSISTENT_DISK_ANSWER}"
    names = sorted(fields)
    close = difflib.get_close_matches(str(key).lower(), names, n=1, cutoff=0.0)
    meant = f"did you mean {close[0]}? " if close else ""
    return f"unknown field; {meant}valid fields: {', '.join(names)}"


@extend_schema_field({"oneOf": [{"type": "string", "enum": list(checkpointing.CHECKPOINTING)},
                                {"type": "boolean"}],
                      "description": "none | selective (the attention recomputed in backward) "
                                     "| full (every layer recomputed); true and false, the "
                                     "older spelling, mean full and none."})
class CheckpointingField(serializers.Field):
    """A model's activation checkpointing mode; the older true/false are read as full/none."""

    def to_internal_value(self, data: Any) -> str:
        try:
            return checkpointing.checkpointing_mode(data)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: Any) -> str:
        return checkpointing.checkpointing_mode(value)
