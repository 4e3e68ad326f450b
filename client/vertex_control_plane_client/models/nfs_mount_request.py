from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="NfsMountRequest")


@_attrs_define
class NfsMountRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        server (str): The NFS server's IP or host name in the VPC.
        path (str): The exported directory, e.g. /share.
        mount_point (str): Mounted at /mnt/nfs/<mount_point>.
    """

    server: str
    path: str
    mount_point: str

    def to_dict(self) -> dict[str, Any]:
        server = self.server

        path = self.path

        mount_point = self.mount_point

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "server": server,
                "path": path,
                "mount_point": mount_point,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        server = d.pop("server")

        path = d.pop("path")

        mount_point = d.pop("mount_point")

        nfs_mount_request = cls(
            server=server,
            path=path,
            mount_point=mount_point,
        )

        return nfs_mount_request
