from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.deep_speed_request_extra import DeepSpeedRequestExtra
    from ..models.deep_speed_request_fp_16 import DeepSpeedRequestFp16
    from ..models.deep_speed_request_optimizer import DeepSpeedRequestOptimizer
    from ..models.deep_speed_request_scheduler import DeepSpeedRequestScheduler
    from ..models.deep_speed_request_zero import DeepSpeedRequestZero


T = TypeVar("T", bound="DeepSpeedRequest")


@_attrs_define
class DeepSpeedRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        offload_optimizer (bool | Unset):
        offload_params (bool | Unset):
        gradient_clipping (float | Unset):
        optimizer (DeepSpeedRequestOptimizer | Unset): {"type": "AdamW", "lr": 3e-4, "betas": [0.9, 0.999], "eps": 1e-8,
            "weight_decay": 0.01}
        scheduler (DeepSpeedRequestScheduler | Unset): {"type": "WarmupDecayLR", "warmup_num_steps": 1000,
            "total_num_steps": 100000}
        fp16 (DeepSpeedRequestFp16 | Unset): fp16 loss scaling: initial_scale_power, loss_scale_window, hysteresis,
            min_loss_scale
        zero (DeepSpeedRequestZero | Unset): allgather_bucket_size, reduce_bucket_size, overlap_comm, reduce_scatter,
            contiguous_gradients, allgather_partitions
        extra (DeepSpeedRequestExtra | Unset): Any other top-level DeepSpeed key.
    """

    offload_optimizer: bool | Unset = UNSET
    offload_params: bool | Unset = UNSET
    gradient_clipping: float | Unset = UNSET
    optimizer: DeepSpeedRequestOptimizer | Unset = UNSET
    scheduler: DeepSpeedRequestScheduler | Unset = UNSET
    fp16: DeepSpeedRequestFp16 | Unset = UNSET
    zero: DeepSpeedRequestZero | Unset = UNSET
    extra: DeepSpeedRequestExtra | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        offload_optimizer = self.offload_optimizer

        offload_params = self.offload_params

        gradient_clipping = self.gradient_clipping

        optimizer: dict[str, Any] | Unset = UNSET
        if not isinstance(self.optimizer, Unset):
            optimizer = self.optimizer.to_dict()

        scheduler: dict[str, Any] | Unset = UNSET
        if not isinstance(self.scheduler, Unset):
            scheduler = self.scheduler.to_dict()

        fp16: dict[str, Any] | Unset = UNSET
        if not isinstance(self.fp16, Unset):
            fp16 = self.fp16.to_dict()

        zero: dict[str, Any] | Unset = UNSET
        if not isinstance(self.zero, Unset):
            zero = self.zero.to_dict()

        extra: dict[str, Any] | Unset = UNSET
        if not isinstance(self.extra, Unset):
            extra = self.extra.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if offload_optimizer is not UNSET:
            field_dict["offload_optimizer"] = offload_optimizer
        if offload_params is not UNSET:
            field_dict["offload_params"] = offload_params
        if gradient_clipping is not UNSET:
            field_dict["gradient_clipping"] = gradient_clipping
        if optimizer is not UNSET:
            field_dict["optimizer"] = optimizer
        if scheduler is not UNSET:
            field_dict["scheduler"] = scheduler
        if fp16 is not UNSET:
            field_dict["fp16"] = fp16
        if zero is not UNSET:
            field_dict["zero"] = zero
        if extra is not UNSET:
            field_dict["extra"] = extra

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.deep_speed_request_extra import DeepSpeedRequestExtra  # noqa: PLC0415
        from ..models.deep_speed_request_fp_16 import DeepSpeedRequestFp16  # noqa: PLC0415
        from ..models.deep_speed_request_optimizer import DeepSpeedRequestOptimizer  # noqa: PLC0415
        from ..models.deep_speed_request_scheduler import DeepSpeedRequestScheduler  # noqa: PLC0415
        from ..models.deep_speed_request_zero import DeepSpeedRequestZero  # noqa: PLC0415

        d = dict(src_dict)
        offload_optimizer = d.pop("offload_optimizer", UNSET)

        offload_params = d.pop("offload_params", UNSET)

        gradient_clipping = d.pop("gradient_clipping", UNSET)

        _optimizer = d.pop("optimizer", UNSET)
        optimizer: DeepSpeedRequestOptimizer | Unset
        if isinstance(_optimizer, Unset):
            optimizer = UNSET
        else:
            optimizer = DeepSpeedRequestOptimizer.from_dict(_optimizer)

        _scheduler = d.pop("scheduler", UNSET)
        scheduler: DeepSpeedRequestScheduler | Unset
        if isinstance(_scheduler, Unset):
            scheduler = UNSET
        else:
            scheduler = DeepSpeedRequestScheduler.from_dict(_scheduler)

        _fp16 = d.pop("fp16", UNSET)
        fp16: DeepSpeedRequestFp16 | Unset
        if isinstance(_fp16, Unset):
            fp16 = UNSET
        else:
            fp16 = DeepSpeedRequestFp16.from_dict(_fp16)

        _zero = d.pop("zero", UNSET)
        zero: DeepSpeedRequestZero | Unset
        if isinstance(_zero, Unset):
            zero = UNSET
        else:
            zero = DeepSpeedRequestZero.from_dict(_zero)

        _extra = d.pop("extra", UNSET)
        extra: DeepSpeedRequestExtra | Unset
        if isinstance(_extra, Unset):
            extra = UNSET
        else:
            extra = DeepSpeedRequestExtra.from_dict(_extra)

        deep_speed_request = cls(
            offload_optimizer=offload_optimizer,
            offload_params=offload_params,
            gradient_clipping=gradient_clipping,
            optimizer=optimizer,
            scheduler=scheduler,
            fp16=fp16,
            zero=zero,
            extra=extra,
        )

        return deep_speed_request
