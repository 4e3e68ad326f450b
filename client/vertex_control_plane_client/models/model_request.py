from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

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
        activation_checkpointing (bool | Unset):
    """

    parameters: int
    trainable_parameters: int | Unset = UNSET
    largest_layer_parameters: int | Unset = UNSET
    hidden_size: int | Unset = UNSET
    layers: int | Unset = UNSET
    sequence_length: int | Unset = UNSET
    attention_heads: int | Unset = UNSET
    vocab_size: int | Unset = UNSET
    activation_checkpointing: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        parameters = self.parameters

        trainable_parameters = self.trainable_parameters

        largest_layer_parameters = self.largest_layer_parameters

        hidden_size = self.hidden_size

        layers = self.layers

        sequence_length = self.sequence_length

        attention_heads = self.attention_heads

        vocab_size = self.vocab_size

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

        activation_checkpointing = d.pop("activation_checkpointing", UNSET)

        model_request = cls(
            parameters=parameters,
            trainable_parameters=trainable_parameters,
            largest_layer_parameters=largest_layer_parameters,
            hidden_size=hidden_size,
            layers=layers,
            sequence_length=sequence_length,
            attention_heads=attention_heads,
            vocab_size=vocab_size,
            activation_checkpointing=activation_checkpointing,
        )

        return model_request
