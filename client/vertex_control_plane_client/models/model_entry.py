from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.runtime_enum import RuntimeEnum

T = TypeVar("T", bound="ModelEntry")


@_attrs_define
class ModelEntry:
    """
    Attributes:
        id (int):
        team (str):
        job (int | None):
        display_name (str):
        step (int | None):
        artifact_uri (str):
        image_uri (str):
        command (Any):
        args (Any):
        runtime (RuntimeEnum): * `eager` - eager (PyTorch as trained)
            * `compiled` - compiled (torch.compile before serving)
            * `aot` - aot (AOTInductor package, built once, kept beside the weights)
            * `triton` - triton (NVIDIA Triton serving an ONNX model repository)
            * `tensorrt` - tensorrt (NVIDIA Triton serving a TensorRT engine, GPU only)
            * `vllm` - vllm (Model Garden's vLLM container, Hugging Face models, GPU only) Default: RuntimeEnum.EAGER.
        format_ (str): product or hf.
        architecture (str):
        parameter_count (int | None):
        vllm (Any):
        state (str):
        vertex_name (str):
        error_message (str):
        created_at (datetime.datetime):
        uploaded_at (datetime.datetime | None):
        engine_accelerator (str):
    """

    id: int
    team: str
    job: int | None
    display_name: str
    step: int | None
    artifact_uri: str
    image_uri: str
    command: Any
    args: Any
    format_: str
    architecture: str
    parameter_count: int | None
    vllm: Any
    state: str
    vertex_name: str
    error_message: str
    created_at: datetime.datetime
    uploaded_at: datetime.datetime | None
    engine_accelerator: str
    runtime: RuntimeEnum = RuntimeEnum.EAGER
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        team = self.team

        job: int | None
        job = self.job

        display_name = self.display_name

        step: int | None
        step = self.step

        artifact_uri = self.artifact_uri

        image_uri = self.image_uri

        command = self.command

        args = self.args

        runtime = self.runtime.value

        format_ = self.format_

        architecture = self.architecture

        parameter_count: int | None
        parameter_count = self.parameter_count

        vllm = self.vllm

        state = self.state

        vertex_name = self.vertex_name

        error_message = self.error_message

        created_at = self.created_at.isoformat()

        uploaded_at: None | str
        if isinstance(self.uploaded_at, datetime.datetime):
            uploaded_at = self.uploaded_at.isoformat()
        else:
            uploaded_at = self.uploaded_at

        engine_accelerator = self.engine_accelerator

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "team": team,
                "job": job,
                "display_name": display_name,
                "step": step,
                "artifact_uri": artifact_uri,
                "image_uri": image_uri,
                "command": command,
                "args": args,
                "runtime": runtime,
                "format": format_,
                "architecture": architecture,
                "parameter_count": parameter_count,
                "vllm": vllm,
                "state": state,
                "vertex_name": vertex_name,
                "error_message": error_message,
                "created_at": created_at,
                "uploaded_at": uploaded_at,
                "engine_accelerator": engine_accelerator,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        team = d.pop("team")

        def _parse_job(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        job = _parse_job(d.pop("job"))

        display_name = d.pop("display_name")

        def _parse_step(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        step = _parse_step(d.pop("step"))

        artifact_uri = d.pop("artifact_uri")

        image_uri = d.pop("image_uri")

        command = d.pop("command")

        args = d.pop("args")

        runtime = RuntimeEnum(d.pop("runtime"))

        format_ = d.pop("format")

        architecture = d.pop("architecture")

        def _parse_parameter_count(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        parameter_count = _parse_parameter_count(d.pop("parameter_count"))

        vllm = d.pop("vllm")

        state = d.pop("state")

        vertex_name = d.pop("vertex_name")

        error_message = d.pop("error_message")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_uploaded_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                uploaded_at_type_0 = datetime.datetime.fromisoformat(data)

                return uploaded_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        uploaded_at = _parse_uploaded_at(d.pop("uploaded_at"))

        engine_accelerator = d.pop("engine_accelerator")

        model_entry = cls(
            id=id,
            team=team,
            job=job,
            display_name=display_name,
            step=step,
            artifact_uri=artifact_uri,
            image_uri=image_uri,
            command=command,
            args=args,
            runtime=runtime,
            format_=format_,
            architecture=architecture,
            parameter_count=parameter_count,
            vllm=vllm,
            state=state,
            vertex_name=vertex_name,
            error_message=error_message,
            created_at=created_at,
            uploaded_at=uploaded_at,
            engine_accelerator=engine_accelerator,
        )

        model_entry.additional_properties = d
        return model_entry

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
