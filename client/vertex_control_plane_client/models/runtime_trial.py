from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RuntimeTrial")


@_attrs_define
class RuntimeTrial:
    """
    Attributes:
        id (int):
        model (int):
        machine_type (str):
        accelerator_type (str):
        accelerator_count (int):
        prompt_tokens (int):
        output_tokens (int):
        concurrency (int):
        requests (int):
        p99_target_ms (int):
        runtimes (Any):
        hourly_micros (int | None):
        state (str):
        job_name (str):
        results (Any): One row per runtime, in the candidates' order: runtime, tokens_per_s, p50_ms, p99_ms, requests,
            errors, start_s, note (why a runtime has no figures), cost_per_million_micros (micro-dollars per million
            generated tokens at the machine's hourly price), meets_target.
        chosen_runtime (str):
        choice_reason (str):
        error_message (str):
        created_at (datetime.datetime):
        finished_at (datetime.datetime | None):
    """

    id: int
    model: int
    machine_type: str
    accelerator_type: str
    accelerator_count: int
    prompt_tokens: int
    output_tokens: int
    concurrency: int
    requests: int
    p99_target_ms: int
    runtimes: Any
    hourly_micros: int | None
    state: str
    job_name: str
    results: Any
    chosen_runtime: str
    choice_reason: str
    error_message: str
    created_at: datetime.datetime
    finished_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        model = self.model

        machine_type = self.machine_type

        accelerator_type = self.accelerator_type

        accelerator_count = self.accelerator_count

        prompt_tokens = self.prompt_tokens

        output_tokens = self.output_tokens

        concurrency = self.concurrency

        requests = self.requests

        p99_target_ms = self.p99_target_ms

        runtimes = self.runtimes

        hourly_micros: int | None
        hourly_micros = self.hourly_micros

        state = self.state

        job_name = self.job_name

        results = self.results

        chosen_runtime = self.chosen_runtime

        choice_reason = self.choice_reason

        error_message = self.error_message

        created_at = self.created_at.isoformat()

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "model": model,
                "machine_type": machine_type,
                "accelerator_type": accelerator_type,
                "accelerator_count": accelerator_count,
                "prompt_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "concurrency": concurrency,
                "requests": requests,
                "p99_target_ms": p99_target_ms,
                "runtimes": runtimes,
                "hourly_micros": hourly_micros,
                "state": state,
                "job_name": job_name,
                "results": results,
                "chosen_runtime": chosen_runtime,
                "choice_reason": choice_reason,
                "error_message": error_message,
                "created_at": created_at,
                "finished_at": finished_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        model = d.pop("model")

        machine_type = d.pop("machine_type")

        accelerator_type = d.pop("accelerator_type")

        accelerator_count = d.pop("accelerator_count")

        prompt_tokens = d.pop("prompt_tokens")

        output_tokens = d.pop("output_tokens")

        concurrency = d.pop("concurrency")

        requests = d.pop("requests")

        p99_target_ms = d.pop("p99_target_ms")

        runtimes = d.pop("runtimes")

        def _parse_hourly_micros(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        hourly_micros = _parse_hourly_micros(d.pop("hourly_micros"))

        state = d.pop("state")

        job_name = d.pop("job_name")

        results = d.pop("results")

        chosen_runtime = d.pop("chosen_runtime")

        choice_reason = d.pop("choice_reason")

        error_message = d.pop("error_message")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        runtime_trial = cls(
            id=id,
            model=model,
            machine_type=machine_type,
            accelerator_type=accelerator_type,
            accelerator_count=accelerator_count,
            prompt_tokens=prompt_tokens,
            output_tokens=output_tokens,
            concurrency=concurrency,
            requests=requests,
            p99_target_ms=p99_target_ms,
            runtimes=runtimes,
            hourly_micros=hourly_micros,
            state=state,
            job_name=job_name,
            results=results,
            chosen_runtime=chosen_runtime,
            choice_reason=choice_reason,
            error_message=error_message,
            created_at=created_at,
            finished_at=finished_at,
        )

        runtime_trial.additional_properties = d
        return runtime_trial

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
