from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.alert_kind_enum import AlertKindEnum
from ..models.delivery_enum import DeliveryEnum

T = TypeVar("T", bound="Alert")


@_attrs_define
class Alert:
    """
    Attributes:
        id (int):
        kind (AlertKindEnum): * `BREACH` - Breach
            * `RECOVERY` - Recovery
        at (datetime.datetime):
        p95_ms (float | None):
        error_rate (float | None):
        samples (int):
        message (str):
        delivery (DeliveryEnum | None):
        delivered_at (datetime.datetime | None):
        delivery_error (str):
    """

    id: int
    kind: AlertKindEnum
    at: datetime.datetime
    p95_ms: float | None
    error_rate: float | None
    samples: int
    message: str
    delivery: DeliveryEnum | None
    delivered_at: datetime.datetime | None
    delivery_error: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind.value

        at = self.at.isoformat()

        p95_ms: float | None
        p95_ms = self.p95_ms

        error_rate: float | None
        error_rate = self.error_rate

        samples = self.samples

        message = self.message

        delivery: None | str
        if isinstance(self.delivery, DeliveryEnum):
            delivery = self.delivery.value
        else:
            delivery = self.delivery

        delivered_at: None | str
        if isinstance(self.delivered_at, datetime.datetime):
            delivered_at = self.delivered_at.isoformat()
        else:
            delivered_at = self.delivered_at

        delivery_error = self.delivery_error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "kind": kind,
                "at": at,
                "p95_ms": p95_ms,
                "error_rate": error_rate,
                "samples": samples,
                "message": message,
                "delivery": delivery,
                "delivered_at": delivered_at,
                "delivery_error": delivery_error,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        kind = AlertKindEnum(d.pop("kind"))

        at = datetime.datetime.fromisoformat(d.pop("at"))

        def _parse_p95_ms(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        p95_ms = _parse_p95_ms(d.pop("p95_ms"))

        def _parse_error_rate(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        error_rate = _parse_error_rate(d.pop("error_rate"))

        samples = d.pop("samples")

        message = d.pop("message")

        def _parse_delivery(data: object) -> DeliveryEnum | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                delivery_type_0 = DeliveryEnum(data)

                return delivery_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeliveryEnum | None, data)

        delivery = _parse_delivery(d.pop("delivery"))

        def _parse_delivered_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                delivered_at_type_0 = datetime.datetime.fromisoformat(data)

                return delivered_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        delivered_at = _parse_delivered_at(d.pop("delivered_at"))

        delivery_error = d.pop("delivery_error")

        alert = cls(
            id=id,
            kind=kind,
            at=at,
            p95_ms=p95_ms,
            error_rate=error_rate,
            samples=samples,
            message=message,
            delivery=delivery,
            delivered_at=delivered_at,
            delivery_error=delivery_error,
        )

        alert.additional_properties = d
        return alert

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
