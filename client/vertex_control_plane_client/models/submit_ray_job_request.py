from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.submit_ray_job_request_env_vars import SubmitRayJobRequestEnvVars


T = TypeVar("T", bound="SubmitRayJobRequest")


@_attrs_define
class SubmitRayJobRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        cluster (int): The cluster's id.
        entrypoint (list[str]): The command as arguments; no shell.
        env_vars (SubmitRayJobRequestEnvVars | Unset):
        entrypoint_num_cpus (float | None | Unset):
    """

    cluster: int
    entrypoint: list[str]
    env_vars: SubmitRayJobRequestEnvVars | Unset = UNSET
    entrypoint_num_cpus: float | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cluster = self.cluster

        entrypoint = self.entrypoint

        env_vars: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env_vars, Unset):
            env_vars = self.env_vars.to_dict()

        entrypoint_num_cpus: float | None | Unset
        if isinstance(self.entrypoint_num_cpus, Unset):
            entrypoint_num_cpus = UNSET
        else:
            entrypoint_num_cpus = self.entrypoint_num_cpus

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cluster": cluster,
                "entrypoint": entrypoint,
            }
        )
        if env_vars is not UNSET:
            field_dict["env_vars"] = env_vars
        if entrypoint_num_cpus is not UNSET:
            field_dict["entrypoint_num_cpus"] = entrypoint_num_cpus

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.submit_ray_job_request_env_vars import SubmitRayJobRequestEnvVars  # noqa: PLC0415

        d = dict(src_dict)
        cluster = d.pop("cluster")

        entrypoint = cast(list[str], d.pop("entrypoint"))

        _env_vars = d.pop("env_vars", UNSET)
        env_vars: SubmitRayJobRequestEnvVars | Unset
        if isinstance(_env_vars, Unset):
            env_vars = UNSET
        else:
            env_vars = SubmitRayJobRequestEnvVars.from_dict(_env_vars)

        def _parse_entrypoint_num_cpus(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        entrypoint_num_cpus = _parse_entrypoint_num_cpus(d.pop("entrypoint_num_cpus", UNSET))

        submit_ray_job_request = cls(
            cluster=cluster,
            entrypoint=entrypoint,
            env_vars=env_vars,
            entrypoint_num_cpus=entrypoint_num_cpus,
        )

        return submit_ray_job_request
