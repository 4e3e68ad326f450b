"""What every API serializer of the control plane shares."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from vertexplan.catalog.storage import PERSISTENT_DISK_ANSWER
from vertexplan.composer.request import PERSISTENT_DISK_WORDS


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know, so a typo is an error instead of a silent default."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({key: [_unknown(key, self.fields)]
                                                   for key in unknown})
        return super().to_internal_value(data)


def _unknown(key: str, fields: Any) -> str:
    if key in PERSISTENT_DISK_WORDS:
        return f"{key}: {PERSISTENT_DISK_ANSWER}"
    return f"unknown field; valid fields: {', '.join(sorted(fields))}"
