from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Step")


@_attrs_define
class Step:
    """
    Attributes:
        attempt (int):
        step (int):
        timestamp (datetime.datetime):
        loss (float | None):
        lr (float | None):
        tokens_per_s (float | None):
        step_time_s (float | None):
        span (int):
    """

    attempt: int
    step: int
    timestamp: datetime.datetime
    loss: float | None
    lr: float | None
    tokens_per_s: float | None
    step_time_s: float | None
    span: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        step = self.step

        timestamp = self.timestamp.isoformat()

        loss: float | None
        loss = self.loss

        lr: float | None
        lr = self.lr

        tokens_per_s: float | None
        tokens_per_s = self.tokens_per_s

        step_time_s: float | None
        step_time_s = self.step_time_s

        span = self.span

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "step": step,
                "timestamp": timestamp,
                "loss": loss,
                "lr": lr,
                "tokens_per_s": tokens_per_s,
                "step_time_s": step_time_s,
                "span": span,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt = d.pop("attempt")

        step = d.pop("step")

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        def _parse_loss(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        loss = _parse_loss(d.pop("loss"))

        def _parse_lr(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        lr = _parse_lr(d.pop("lr"))

        def _parse_tokens_per_s(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        tokens_per_s = _parse_tokens_per_s(d.pop("tokens_per_s"))

        def _parse_step_time_s(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        step_time_s = _parse_step_time_s(d.pop("step_time_s"))

        span = d.pop("span")

        step = cls(
            attempt=attempt,
            step=step,
            timestamp=timestamp,
            loss=loss,
            lr=lr,
            tokens_per_s=tokens_per_s,
            step_time_s=step_time_s,
            span=span,
        )

        step.additional_properties = d
        return step

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
