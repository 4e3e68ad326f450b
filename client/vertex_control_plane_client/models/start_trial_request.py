from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="StartTrialRequest")


@_attrs_define
class StartTrialRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        machine_type (str): The machine type the model is to be deployed on (n1-standard-4, g2-standard-8).
        accelerator_type (str | Unset):  Default: ''.
        accelerator_count (int | Unset):  Default: 0.
        prompt_tokens (int | Unset): Tokens in each request's prompt (1 to 192). Default: 32.
        output_tokens (int | Unset): Tokens each request generates (1 to 64). Default: 16.
        concurrency (int | Unset): Requests in flight at once (1 to 32). Default: 4.
        requests (int | Unset): Requests measured per runtime (1 to 256). Default: 16.
        p99_target_ms (int | Unset): The p99 latency a runtime must meet, in milliseconds (1 to 600000). Default: 1000.
    """

    machine_type: str
    accelerator_type: str | Unset = ""
    accelerator_count: int | Unset = 0
    prompt_tokens: int | Unset = 32
    output_tokens: int | Unset = 16
    concurrency: int | Unset = 4
    requests: int | Unset = 16
    p99_target_ms: int | Unset = 1000

    def to_dict(self) -> dict[str, Any]:
        machine_type = self.machine_type

        accelerator_type = self.accelerator_type

        accelerator_count = self.accelerator_count

        prompt_tokens = self.prompt_tokens

        output_tokens = self.output_tokens

        concurrency = self.concurrency

        requests = self.requests

        p99_target_ms = self.p99_target_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "machine_type": machine_type,
            }
        )
        if accelerator_type is not UNSET:
            field_dict["accelerator_type"] = accelerator_type
        if accelerator_count is not UNSET:
            field_dict["accelerator_count"] = accelerator_count
        if prompt_tokens is not UNSET:
            field_dict["prompt_tokens"] = prompt_tokens
        if output_tokens is not UNSET:
            field_dict["output_tokens"] = output_tokens
        if concurrency is not UNSET:
            field_dict["concurrency"] = concurrency
        if requests is not UNSET:
            field_dict["requests"] = requests
        if p99_target_ms is not UNSET:
            field_dict["p99_target_ms"] = p99_target_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        machine_type = d.pop("machine_type")

        accelerator_type = d.pop("accelerator_type", UNSET)

        accelerator_count = d.pop("accelerator_count", UNSET)

        prompt_tokens = d.pop("prompt_tokens", UNSET)

        output_tokens = d.pop("output_tokens", UNSET)

        concurrency = d.pop("concurrency", UNSET)

        requests = d.pop("requests", UNSET)

        p99_target_ms = d.pop("p99_target_ms", UNSET)

        start_trial_request = cls(
            machine_type=machine_type,
            accelerator_type=accelerator_type,
            accelerator_count=accelerator_count,
            prompt_tokens=prompt_tokens,
            output_tokens=output_tokens,
            concurrency=concurrency,
            requests=requests,
            p99_target_ms=p99_target_ms,
        )

        return start_trial_request
