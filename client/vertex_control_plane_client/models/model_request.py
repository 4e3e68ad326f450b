from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.model_request_activation_checkpointing_type_0 import (
    ModelRequestActivationCheckpointingType0,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ModelRequest")


@_attrs_define
class ModelRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        parameters (int):
        trainable_parameters (int | Unset):
        largest_layer_parameters (int | Unset):
        hidden_size (int | Unset):
        layers (int | Unset):
        sequence_length (int | Unset):
        attention_heads (int | Unset):
        vocab_size (int | Unset):
        intermediate_size (int | Unset): A gated MLP's width (SwiGLU/GeGLU: Llama, Qwen, Gemma); without it, a 4h MLP.
        kv_heads (int | Unset): Key/value heads of grouped-query attention (default: attention_heads).
        activation_checkpointing (bool | ModelRequestActivationCheckpointingType0 | Unset): none | selective (the
            attention recomputed in backward) | full (every layer recomputed); true and false, the older spelling, mean full
            and none.
    """

    parameters: int
    trainable_parameters: int | Unset = UNSET
    largest_layer_parameters: int | Unset = UNSET
    hidden_size: int | Unset = UNSET
    layers: int | Unset = UNSET
    sequence_length: int | Unset = UNSET
    attention_heads: int | Unset = UNSET
    vocab_size: int | Unset = UNSET
    intermediate_size: int | Unset = UNSET
    kv_heads: int | Unset = UNSET
    activation_checkpointing: bool | ModelRequestActivationCheckpointingType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        parameters = self.parameters

        trainable_parameters = self.trainable_parameters

        largest_layer_parameters = self.largest_layer_parameters

        hidden_size = self.hidden_size

        layers = self.layers

        sequence_length = self.sequence_length

        attention_heads = self.attention_heads

        vocab_size = self.vocab_size

        intermediate_size = self.intermediate_size

        kv_heads = self.kv_heads

        activation_checkpointing: bool | str | Unset
        if isinstance(self.activation_checkpointing, Unset):
            activation_checkpointing = UNSET
        elif isinstance(self.activation_checkpointing, ModelRequestActivationCheckpointingType0):
            activation_checkpointing = self.activation_checkpointing.value
        else:
            activation_checkpointing = self.activation_checkpointing

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "parameters": parameters,
            }
        )
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
        if intermediate_size is not UNSET:
            field_dict["intermediate_size"] = intermediate_size
        if kv_heads is not UNSET:
            field_dict["kv_heads"] = kv_heads
        if activation_checkpointing is not UNSET:
            field_dict["activation_checkpointing"] = activation_checkpointing

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        parameters = d.pop("parameters")

        trainable_parameters = d.pop("trainable_parameters", UNSET)

        largest_layer_parameters = d.pop("largest_layer_parameters", UNSET)

        hidden_size = d.pop("hidden_size", UNSET)

        layers = d.pop("layers", UNSET)

        sequence_length = d.pop("sequence_length", UNSET)

        attention_heads = d.pop("attention_heads", UNSET)

        vocab_size = d.pop("vocab_size", UNSET)

        intermediate_size = d.pop("intermediate_size", UNSET)

        kv_heads = d.pop("kv_heads", UNSET)

        def _parse_activation_checkpointing(data: object) -> bool | ModelRequestActivationCheckpointingType0 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                activation_checkpointing_type_0 = ModelRequestActivationCheckpointingType0(data)

                return activation_checkpointing_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(bool | ModelRequestActivationCheckpointingType0 | Unset, data)

        activation_checkpointing = _parse_activation_checkpointing(d.pop("activation_checkpointing", UNSET))

        model_request = cls(
            parameters=parameters,
            trainable_parameters=trainable_parameters,
            largest_layer_parameters=largest_layer_parameters,
            hidden_size=hidden_size,
            layers=layers,
            sequence_length=sequence_length,
            attention_heads=attention_heads,
            vocab_size=vocab_size,
            intermediate_size=intermediate_size,
            kv_heads=kv_heads,
            activation_checkpointing=activation_checkpointing,
        )

        return model_request
