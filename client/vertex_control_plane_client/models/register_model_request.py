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
        job (int): The training job's id.
        step (int | None | Unset): A checkpoint step; null: the final export.
        display_name (str | Unset):
        image_uri (str | Unset): The serving image (one from images/); empty: the product's own server. An Artifact
            Registry image must exist, tag included.
        runtime (RuntimeEnum | Unset): * `eager` - eager (PyTorch as trained)
            * `compiled` - compiled (torch.compile before serving)
            * `aot` - aot (AOTInductor package, built once, kept beside the weights)
            * `triton` - triton (NVIDIA Triton serving an ONNX model repository)
            * `tensorrt` - tensorrt (NVIDIA Triton serving a TensorRT engine, GPU only) Default: RuntimeEnum.EAGER.
    """

    job: int
    step: int | None | Unset = UNSET
    display_name: str | Unset = UNSET
    image_uri: str | Unset = UNSET
    runtime: RuntimeEnum | Unset = RuntimeEnum.EAGER

    def to_dict(self) -> dict[str, Any]:
        job = self.job

        step: int | None | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        else:
            step = self.step

        display_name = self.display_name

        image_uri = self.image_uri

        runtime: str | Unset = UNSET
        if not isinstance(self.runtime, Unset):
            runtime = self.runtime.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "job": job,
            }
        )
        if step is not UNSET:
            field_dict["step"] = step
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
        job = d.pop("job")

        def _parse_step(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        step = _parse_step(d.pop("step", UNSET))

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
            step=step,
            display_name=display_name,
            image_uri=image_uri,
            runtime=runtime,
        )

        return register_model_request
