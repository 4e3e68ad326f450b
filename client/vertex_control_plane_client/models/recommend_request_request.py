from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.precision_enum import PrecisionEnum
from ..models.recommend_request_request_activation_checkpointing_type_0 import (
    RecommendRequestRequestActivationCheckpointingType0,
)
from ..models.recommend_request_strategy_enum import RecommendRequestStrategyEnum
from ..models.reference_device_enum import ReferenceDeviceEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="RecommendRequestRequest")


@_attrs_define
class RecommendRequestRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        parameters (int): Total parameter count.
        region (str): A region of the price table.
        precision (PrecisionEnum | Unset): * `fp32` - fp32
            * `bf16` - bf16
            * `fp16` - fp16 Default: PrecisionEnum.BF16.
        trainable_parameters (int | Unset): Parameters the optimizer updates (default: all).
        largest_layer_parameters (int | Unset): Parameters of the largest layer (ZeRO-3/FSDP gather).
        hidden_size (int | Unset): With layers and sequence_length: activations are planned too.
        layers (int | Unset): Transformer layers.
        sequence_length (int | Unset): Tokens per sample.
        attention_heads (int | Unset): Attention heads (default: hidden_size / 128).
        vocab_size (int | Unset): Vocabulary size.
        micro_batch_size (int | Unset): Micro batch per device. Default: 1.
        activation_checkpointing (bool | RecommendRequestRequestActivationCheckpointingType0 | Unset): none | selective
            (the attention recomputed in backward) | full (every layer recomputed); true and false, the older spelling, mean
            full and none. Default: RecommendRequestRequestActivationCheckpointingType0.NONE.
        strategy (RecommendRequestStrategyEnum | Unset): * `any` - any
            * `ddp` - ddp
            * `fsdp` - fsdp
            * `zero1` - zero1
            * `zero2` - zero2
            * `zero3` - zero3
            * `tpu_jax` - tpu_jax
            * `tpu_xla` - tpu_xla Default: RecommendRequestStrategyEnum.ANY.
        hours (str | Unset): Hours every configuration runs; or give steps and step_time_s.
        steps (int | Unset): Training steps (with step_time_s and reference_device).
        step_time_s (str | Unset): Seconds a step takes on the reference configuration.
        reference_device (ReferenceDeviceEnum | Unset): * `NVIDIA_TESLA_P4` - NVIDIA_TESLA_P4
            * `NVIDIA_TESLA_P100` - NVIDIA_TESLA_P100
            * `NVIDIA_TESLA_V100` - NVIDIA_TESLA_V100
            * `NVIDIA_TESLA_T4` - NVIDIA_TESLA_T4
            * `NVIDIA_TESLA_A100` - NVIDIA_TESLA_A100
            * `NVIDIA_A100_80GB` - NVIDIA_A100_80GB
            * `NVIDIA_L4` - NVIDIA_L4
            * `NVIDIA_H100_80GB` - NVIDIA_H100_80GB
            * `NVIDIA_H100_MEGA_80GB` - NVIDIA_H100_MEGA_80GB
            * `NVIDIA_H200_141GB` - NVIDIA_H200_141GB
            * `NVIDIA_B200` - NVIDIA_B200
            * `TPU_V2` - TPU_V2
            * `TPU_V3` - TPU_V3
            * `TPU_V5_LITEPOD` - TPU_V5_LITEPOD
            * `TPU v6e` - TPU v6e
        reference_devices (int | Unset): How many of them. Default: 1.
        deadline_hours (str | Unset): Drop configurations that would take longer.
        schedules (list[str] | Unset): Scheduling strategies to consider: STANDARD, SPOT, FLEX_START (all by default).
        max_nodes (int | Unset):  Default: 8.
        limit (int | Unset):  Default: 10.
        image_uri (str | Unset):
        command (list[str] | Unset):
    """

    parameters: int
    region: str
    precision: PrecisionEnum | Unset = PrecisionEnum.BF16
    trainable_parameters: int | Unset = UNSET
    largest_layer_parameters: int | Unset = UNSET
    hidden_size: int | Unset = UNSET
    layers: int | Unset = UNSET
    sequence_length: int | Unset = UNSET
    attention_heads: int | Unset = UNSET
    vocab_size: int | Unset = UNSET
    micro_batch_size: int | Unset = 1
    activation_checkpointing: bool | RecommendRequestRequestActivationCheckpointingType0 | Unset = (
        RecommendRequestRequestActivationCheckpointingType0.NONE
    )
    strategy: RecommendRequestStrategyEnum | Unset = RecommendRequestStrategyEnum.ANY
    hours: str | Unset = UNSET
    steps: int | Unset = UNSET
    step_time_s: str | Unset = UNSET
    reference_device: ReferenceDeviceEnum | Unset = UNSET
    reference_devices: int | Unset = 1
    deadline_hours: str | Unset = UNSET
    schedules: list[str] | Unset = UNSET
    max_nodes: int | Unset = 8
    limit: int | Unset = 10
    image_uri: str | Unset = UNSET
    command: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        parameters = self.parameters

        region = self.region

        precision: str | Unset = UNSET
        if not isinstance(self.precision, Unset):
            precision = self.precision.value

        trainable_parameters = self.trainable_parameters

        largest_layer_parameters = self.largest_layer_parameters

        hidden_size = self.hidden_size

        layers = self.layers

        sequence_length = self.sequence_length

        attention_heads = self.attention_heads

        vocab_size = self.vocab_size

        micro_batch_size = self.micro_batch_size

        activation_checkpointing: bool | str | Unset
        if isinstance(self.activation_checkpointing, Unset):
            activation_checkpointing = UNSET
        elif isinstance(self.activation_checkpointing, RecommendRequestRequestActivationCheckpointingType0):
            activation_checkpointing = self.activation_checkpointing.value
        else:
            activation_checkpointing = self.activation_checkpointing

        strategy: str | Unset = UNSET
        if not isinstance(self.strategy, Unset):
            strategy = self.strategy.value

        hours = self.hours

        steps = self.steps

        step_time_s = self.step_time_s

        reference_device: str | Unset = UNSET
        if not isinstance(self.reference_device, Unset):
            reference_device = self.reference_device.value

        reference_devices = self.reference_devices

        deadline_hours = self.deadline_hours

        schedules: list[str] | Unset = UNSET
        if not isinstance(self.schedules, Unset):
            schedules = self.schedules

        max_nodes = self.max_nodes

        limit = self.limit

        image_uri = self.image_uri

        command: list[str] | Unset = UNSET
        if not isinstance(self.command, Unset):
            command = self.command

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "parameters": parameters,
                "region": region,
            }
        )
        if precision is not UNSET:
            field_dict["precision"] = precision
        if trainable_parameters is not UNSET:
            field_dict["trainable_parameters"] = trainable_parameters
        if largest_layer_parameters is not UNSET:
            field_dict["largest_layer_parameters"] = largest_layer_parameters
        if hidden_size is not UNSET:
            field_dict["hidden_size"] = hidden_size
        if layers is not UNSET:
            field_dict["layers"] = layers
        if sequence_length is not UNSET:
            field_dict["sequence_length"] = sequence_length
        if attention_heads is not UNSET:
            field_dict["attention_heads"] = attention_heads
        if vocab_size is not UNSET:
            field_dict["vocab_size"] = vocab_size
        if micro_batch_size is not UNSET:
            field_dict["micro_batch_size"] = micro_batch_size
        if activation_checkpointing is not UNSET:
            field_dict["activation_checkpointing"] = activation_checkpointing
        if strategy is not UNSET:
            field_dict["strategy"] = strategy
        if hours is not UNSET:
            field_dict["hours"] = hours
        if steps is not UNSET:
            field_dict["steps"] = steps
        if step_time_s is not UNSET:
            field_dict["step_time_s"] = step_time_s
        if reference_device is not UNSET:
            field_dict["reference_device"] = reference_device
        if reference_devices is not UNSET:
            field_dict["reference_devices"] = reference_devices
        if deadline_hours is not UNSET:
            field_dict["deadline_hours"] = deadline_hours
        if schedules is not UNSET:
            field_dict["schedules"] = schedules
        if max_nodes is not UNSET:
            field_dict["max_nodes"] = max_nodes
        if limit is not UNSET:
            field_dict["limit"] = limit
        if image_uri is not UNSET:
            field_dict["image_uri"] = image_uri
        if command is not UNSET:
            field_dict["command"] = command

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        parameters = d.pop("parameters")

        region = d.pop("region")

        _precision = d.pop("precision", UNSET)
        precision: PrecisionEnum | Unset
        if isinstance(_precision, Unset):
            precision = UNSET
        else:
            precision = PrecisionEnum(_precision)

        trainable_parameters = d.pop("trainable_parameters", UNSET)

        largest_layer_parameters = d.pop("largest_layer_parameters", UNSET)

        hidden_size = d.pop("hidden_size", UNSET)

        layers = d.pop("layers", UNSET)

        sequence_length = d.pop("sequence_length", UNSET)

        attention_heads = d.pop("attention_heads", UNSET)

        vocab_size = d.pop("vocab_size", UNSET)

        micro_batch_size = d.pop("micro_batch_size", UNSET)

        def _parse_activation_checkpointing(
            data: object,
        ) -> bool | RecommendRequestRequestActivationCheckpointingType0 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                activation_checkpointing_type_0 = RecommendRequestRequestActivationCheckpointingType0(data)

                return activation_checkpointing_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(bool | RecommendRequestRequestActivationCheckpointingType0 | Unset, data)

        activation_checkpointing = _parse_activation_checkpointing(d.pop("activation_checkpointing", UNSET))

        _strategy = d.pop("strategy", UNSET)
        strategy: RecommendRequestStrategyEnum | Unset
        if isinstance(_strategy, Unset):
            strategy = UNSET
        else:
            strategy = RecommendRequestStrategyEnum(_strategy)

        hours = d.pop("hours", UNSET)

        steps = d.pop("steps", UNSET)

        step_time_s = d.pop("step_time_s", UNSET)

        _reference_device = d.pop("reference_device", UNSET)
        reference_device: ReferenceDeviceEnum | Unset
        if isinstance(_reference_device, Unset):
            reference_device = UNSET
        else:
            reference_device = ReferenceDeviceEnum(_reference_device)

        reference_devices = d.pop("reference_devices", UNSET)

        deadline_hours = d.pop("deadline_hours", UNSET)

        schedules = cast(list[str], d.pop("schedules", UNSET))

        max_nodes = d.pop("max_nodes", UNSET)

        limit = d.pop("limit", UNSET)

        image_uri = d.pop("image_uri", UNSET)

        command = cast(list[str], d.pop("command", UNSET))

        recommend_request_request = cls(
            parameters=parameters,
            region=region,
            precision=precision,
            trainable_parameters=trainable_parameters,
            largest_layer_parameters=largest_layer_parameters,
            hidden_size=hidden_size,
            layers=layers,
            sequence_length=sequence_length,
            attention_heads=attention_heads,
            vocab_size=vocab_size,
            micro_batch_size=micro_batch_size,
            activation_checkpointing=activation_checkpointing,
            strategy=strategy,
            hours=hours,
            steps=steps,
            step_time_s=step_time_s,
            reference_device=reference_device,
            reference_devices=reference_devices,
            deadline_hours=deadline_hours,
            schedules=schedules,
            max_nodes=max_nodes,
            limit=limit,
            image_uri=image_uri,
            command=command,
        )

        return recommend_request_request
