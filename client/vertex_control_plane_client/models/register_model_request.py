from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.runtime_enum import RuntimeEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="RegisterModelRequest")


@_attrs_define
class RegisterModelRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        job (int | None | Unset): The training job's id; with format hf and no artifact_uri, its final export is
            registered.
        team (str | Unset): Team slug, for an artifact_uri registered without a job; optional when you belong to one
            team.
        format_ (str | Unset): product: the product's trainers' model.pt (a checkpoint or final export); hf: a Hugging
            Face model folder (config.json with a supported architecture, safetensors weights, a tokenizer), checked before
            it is registered. Default: 'product'.
        artifact_uri (str | Unset): format hf: the gs:// folder of the model (a job's --export-hf output or any folder
            under the team's output prefix); empty: the job's final export. Default: ''.
        step (int | None | Unset): A checkpoint step; null: the final export.
        machine_type (str | Unset): runtime vllm: the machine the model is registered for; its GPU count is vLLM's
            tensor parallel size.
        accelerator_type (str | Unset): runtime vllm on an n1 machine: its GPU type.
        accelerator_count (int | Unset):
        max_model_len (int | Unset): runtime vllm: the longest sequence served; default 4096 or the model's
            max_position_embeddings when less.
        dtype (str | Unset): runtime vllm: auto, bfloat16, float16 or float32.
        gpu_memory_utilization (float | Unset): runtime vllm: the share of each GPU vLLM takes, default 0.9.
        display_name (str | Unset):
        image_uri (str | Unset): The serving image (one from images/); empty: the product's own server. An Artifact
            Registry image must exist, tag included.
        runtime (RuntimeEnum | Unset): * `eager` - eager (PyTorch as trained)
            * `compiled` - compiled (torch.compile before serving)
            * `aot` - aot (AOTInductor package, built once, kept beside the weights)
            * `triton` - triton (NVIDIA Triton serving an ONNX model repository)
            * `tensorrt` - tensorrt (NVIDIA Triton serving a TensorRT engine, GPU only)
            * `vllm` - vllm (Model Garden's vLLM container, Hugging Face models, GPU only) Default: RuntimeEnum.EAGER.
    """

    job: int | None | Unset = UNSET
    team: str | Unset = UNSET
    format_: str | Unset = "product"
    artifact_uri: str | Unset = ""
    step: int | None | Unset = UNSET
    machine_type: str | Unset = UNSET
    accelerator_type: str | Unset = UNSET
    accelerator_count: int | Unset = UNSET
    max_model_len: int | Unset = UNSET
    dtype: str | Unset = UNSET
    gpu_memory_utilization: float | Unset = UNSET
    display_name: str | Unset = UNSET
    image_uri: str | Unset = UNSET
    runtime: RuntimeEnum | Unset = RuntimeEnum.EAGER

    def to_dict(self) -> dict[str, Any]:
        job: int | None | Unset
        if isinstance(self.job, Unset):
            job = UNSET
        else:
            job = self.job

        team = self.team

        format_ = self.format_

        artifact_uri = self.artifact_uri

        step: int | None | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        else:
            step = self.step

        machine_type = self.machine_type

        accelerator_type = self.accelerator_type

        accelerator_count = self.accelerator_count

        max_model_len = self.max_model_len

        dtype = self.dtype

        gpu_memory_utilization = self.gpu_memory_utilization

        display_name = self.display_name

        image_uri = self.image_uri

        runtime: str | Unset = UNSET
        if not isinstance(self.runtime, Unset):
            runtime = self.runtime.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if job is not UNSET:
            field_dict["job"] = job
        if team is not UNSET:
            field_dict["team"] = team
        if format_ is not UNSET:
            field_dict["format"] = format_
        if artifact_uri is not UNSET:
            field_dict["artifact_uri"] = artifact_uri
        if step is not UNSET:
            field_dict["step"] = step
        if machine_type is not UNSET:
            field_dict["machine_type"] = machine_type
        if accelerator_type is not UNSET:
            field_dict["accelerator_type"] = accelerator_type
        if accelerator_count is not UNSET:
            field_dict["accelerator_count"] = accelerator_count
        if max_model_len is not UNSET:
            field_dict["max_model_len"] = max_model_len
        if dtype is not UNSET:
            field_dict["dtype"] = dtype
        if gpu_memory_utilization is not UNSET:
            field_dict["gpu_memory_utilization"] = gpu_memory_utilization
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if image_uri is not UNSET:
            field_dict["image_uri"] = image_uri
        if runtime is not UNSET:
            field_dict["runtime"] = runtime

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_job(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        job = _parse_job(d.pop("job", UNSET))

        team = d.pop("team", UNSET)

        format_ = d.pop("format", UNSET)

        artifact_uri = d.pop("artifact_uri", UNSET)

        def _parse_step(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        step = _parse_step(d.pop("step", UNSET))

        machine_type = d.pop("machine_type", UNSET)

        accelerator_type = d.pop("accelerator_type", UNSET)

        accelerator_count = d.pop("accelerator_count", UNSET)

        max_model_len = d.pop("max_model_len", UNSET)

        dtype = d.pop("dtype", UNSET)

        gpu_memory_utilization = d.pop("gpu_memory_utilization", UNSET)

        display_name = d.pop("display_name", UNSET)

        image_uri = d.pop("image_uri", UNSET)

        _runtime = d.pop("runtime", UNSET)
        runtime: RuntimeEnum | Unset
        if isinstance(_runtime, Unset):
            runtime = UNSET
        else:
            runtime = RuntimeEnum(_runtime)

        register_model_request = cls(
            job=job,
            team=team,
            format_=format_,
            artifact_uri=artifact_uri,
            step=step,
            machine_type=machine_type,
            accelerator_type=accelerator_type,
            accelerator_count=accelerator_count,
            max_model_len=max_model_len,
            dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization,
            display_name=display_name,
            image_uri=image_uri,
            runtime=runtime,
        )

        return register_model_request
