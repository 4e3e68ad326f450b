from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.nfs_mount_request import NfsMountRequest
    from ..models.pool_request_env import PoolRequestEnv
    from ..models.reservation_request import ReservationRequest


T = TypeVar("T", bound="PoolRequest")


@_attrs_define
class PoolRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        machine_type (str | Unset):
        accelerator_type (str | Unset):
        accelerator_count (int | Unset):
        tpu_topology (str | Unset):
        gpu_partition_size (str | Unset): MIG partition, e.g. 1g.10gb (A100 80GB, H100).
        boot_disk_type (str | Unset):
        boot_disk_size_gb (int | Unset):
        replica_count (int | Unset):
        reservation (ReservationRequest | Unset): Refuses keys it does not know, so a typo is an error instead of a
            silent default.
        image_uri (str | Unset):
        command (list[str] | Unset):
        args (list[str] | Unset):
        env (PoolRequestEnv | Unset):
        nfs_mounts (list[NfsMountRequest] | Unset):
    """

    machine_type: str | Unset = UNSET
    accelerator_type: str | Unset = UNSET
    accelerator_count: int | Unset = UNSET
    tpu_topology: str | Unset = UNSET
    gpu_partition_size: str | Unset = UNSET
    boot_disk_type: str | Unset = UNSET
    boot_disk_size_gb: int | Unset = UNSET
    replica_count: int | Unset = UNSET
    reservation: ReservationRequest | Unset = UNSET
    image_uri: str | Unset = UNSET
    command: list[str] | Unset = UNSET
    args: list[str] | Unset = UNSET
    env: PoolRequestEnv | Unset = UNSET
    nfs_mounts: list[NfsMountRequest] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        machine_type = self.machine_type

        accelerator_type = self.accelerator_type

        accelerator_count = self.accelerator_count

        tpu_topology = self.tpu_topology

        gpu_partition_size = self.gpu_partition_size

        boot_disk_type = self.boot_disk_type

        boot_disk_size_gb = self.boot_disk_size_gb

        replica_count = self.replica_count

        reservation: dict[str, Any] | Unset = UNSET
        if not isinstance(self.reservation, Unset):
            reservation = self.reservation.to_dict()

        image_uri = self.image_uri

        command: list[str] | Unset = UNSET
        if not isinstance(self.command, Unset):
            command = self.command

        args: list[str] | Unset = UNSET
        if not isinstance(self.args, Unset):
            args = self.args

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        nfs_mounts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.nfs_mounts, Unset):
            nfs_mounts = []
            for nfs_mounts_item_data in self.nfs_mounts:
                nfs_mounts_item = nfs_mounts_item_data.to_dict()
                nfs_mounts.append(nfs_mounts_item)

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if machine_type is not UNSET:
            field_dict["machine_type"] = machine_type
        if accelerator_type is not UNSET:
            field_dict["accelerator_type"] = accelerator_type
        if accelerator_count is not UNSET:
            field_dict["accelerator_count"] = accelerator_count
        if tpu_topology is not UNSET:
            field_dict["tpu_topology"] = tpu_topology
        if gpu_partition_size is not UNSET:
            field_dict["gpu_partition_size"] = gpu_partition_size
        if boot_disk_type is not UNSET:
            field_dict["boot_disk_type"] = boot_disk_type
        if boot_disk_size_gb is not UNSET:
            field_dict["boot_disk_size_gb"] = boot_disk_size_gb
        if replica_count is not UNSET:
            field_dict["replica_count"] = replica_count
        if reservation is not UNSET:
            field_dict["reservation"] = reservation
        if image_uri is not UNSET:
            field_dict["image_uri"] = image_uri
        if command is not UNSET:
            field_dict["command"] = command
        if args is not UNSET:
            field_dict["args"] = args
        if env is not UNSET:
            field_dict["env"] = env
        if nfs_mounts is not UNSET:
            field_dict["nfs_mounts"] = nfs_mounts

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.nfs_mount_request import NfsMountRequest  # noqa: PLC0415
        from ..models.pool_request_env import PoolRequestEnv  # noqa: PLC0415
        from ..models.reservation_request import ReservationRequest  # noqa: PLC0415

        d = dict(src_dict)
        machine_type = d.pop("machine_type", UNSET)

        accelerator_type = d.pop("accelerator_type", UNSET)

        accelerator_count = d.pop("accelerator_count", UNSET)

        tpu_topology = d.pop("tpu_topology", UNSET)

        gpu_partition_size = d.pop("gpu_partition_size", UNSET)

        boot_disk_type = d.pop("boot_disk_type", UNSET)

        boot_disk_size_gb = d.pop("boot_disk_size_gb", UNSET)

        replica_count = d.pop("replica_count", UNSET)

        _reservation = d.pop("reservation", UNSET)
        reservation: ReservationRequest | Unset
        if isinstance(_reservation, Unset):
            reservation = UNSET
        else:
            reservation = ReservationRequest.from_dict(_reservation)

        image_uri = d.pop("image_uri", UNSET)

        command = cast(list[str], d.pop("command", UNSET))

        args = cast(list[str], d.pop("args", UNSET))

        _env = d.pop("env", UNSET)
        env: PoolRequestEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = PoolRequestEnv.from_dict(_env)

        _nfs_mounts = d.pop("nfs_mounts", UNSET)
        nfs_mounts: list[NfsMountRequest] | Unset = UNSET
        if _nfs_mounts is not UNSET:
            nfs_mounts = []
            for nfs_mounts_item_data in _nfs_mounts:
                nfs_mounts_item = NfsMountRequest.from_dict(nfs_mounts_item_data)

                nfs_mounts.append(nfs_mounts_item)

        pool_request = cls(
            machine_type=machine_type,
            accelerator_type=accelerator_type,
            accelerator_count=accelerator_count,
            tpu_topology=tpu_topology,
            gpu_partition_size=gpu_partition_size,
            boot_disk_type=boot_disk_type,
            boot_disk_size_gb=boot_disk_size_gb,
            replica_count=replica_count,
            reservation=reservation,
            image_uri=image_uri,
            command=command,
            args=args,
            env=env,
            nfs_mounts=nfs_mounts,
        )

        return pool_request
