from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PatchedPolicyRequest")


@_attrs_define
class PatchedPolicyRequest:
    """
    Attributes:
        output_prefix (str | Unset): gs://bucket/folder the team's jobs write under; empty: the default
            <CP_OUTPUT_URI>/<team>/. Never inside or around another team's.
        service_accounts (list[str] | Unset): Service accounts the team's jobs may run as; each serves one team only.
        networks (list[str] | Unset):
        reservations (list[str] | Unset):
        allow_web_access (bool | Unset):
        delete_idle_clusters_after_min (int | Unset): Delete the team's running clusters idle this many minutes (no Ray
            job queued or running, no job placed on them): 0 never (the default), else 10 to 10080 (a week).
        queue_wait_alert_min (int | Unset): Tell the team's Slack channels that hear of the queue when a job has waited
            in the queue in front of Vertex this many minutes (once per wait): 0 never (the default), else 15 to 10080 (a
            week).
        hang_k (int | Unset): A running job silent for max(hang_k x the p95 of its step intervals, hang_floor_s) is a
            suspected hang: 2 to 100 (default 10).
        hang_floor_s (int | Unset): The least silence, in seconds, taken for a hang: 60 to 86400 (default 300).
        restart_on_hang (bool | Unset): Restart a suspected hang from its newest committed checkpoint (cancel,
            resubmit); off (the default): only alerted.
    """

    output_prefix: str | Unset = UNSET
    service_accounts: list[str] | Unset = UNSET
    networks: list[str] | Unset = UNSET
    reservations: list[str] | Unset = UNSET
    allow_web_access: bool | Unset = UNSET
    delete_idle_clusters_after_min: int | Unset = UNSET
    queue_wait_alert_min: int | Unset = UNSET
    hang_k: int | Unset = UNSET
    hang_floor_s: int | Unset = UNSET
    restart_on_hang: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        output_prefix = self.output_prefix

        service_accounts: list[str] | Unset = UNSET
        if not isinstance(self.service_accounts, Unset):
            service_accounts = self.service_accounts

        networks: list[str] | Unset = UNSET
        if not isinstance(self.networks, Unset):
            networks = self.networks

        reservations: list[str] | Unset = UNSET
        if not isinstance(self.reservations, Unset):
            reservations = self.reservations

        allow_web_access = self.allow_web_access

        delete_idle_clusters_after_min = self.delete_idle_clusters_after_min

        queue_wait_alert_min = self.queue_wait_alert_min

        hang_k = self.hang_k

        hang_floor_s = self.hang_floor_s

        restart_on_hang = self.restart_on_hang

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if output_prefix is not UNSET:
            field_dict["output_prefix"] = output_prefix
        if service_accounts is not UNSET:
            field_dict["service_accounts"] = service_accounts
        if networks is not UNSET:
            field_dict["networks"] = networks
        if reservations is not UNSET:
            field_dict["reservations"] = reservations
        if allow_web_access is not UNSET:
            field_dict["allow_web_access"] = allow_web_access
        if delete_idle_clusters_after_min is not UNSET:
            field_dict["delete_idle_clusters_after_min"] = delete_idle_clusters_after_min
        if queue_wait_alert_min is not UNSET:
            field_dict["queue_wait_alert_min"] = queue_wait_alert_min
        if hang_k is not UNSET:
            field_dict["hang_k"] = hang_k
        if hang_floor_s is not UNSET:
            field_dict["hang_floor_s"] = hang_floor_s
        if restart_on_hang is not UNSET:
            field_dict["restart_on_hang"] = restart_on_hang

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        output_prefix = d.pop("output_prefix", UNSET)

        service_accounts = cast(list[str], d.pop("service_accounts", UNSET))

        networks = cast(list[str], d.pop("networks", UNSET))

        reservations = cast(list[str], d.pop("reservations", UNSET))

        allow_web_access = d.pop("allow_web_access", UNSET)

        delete_idle_clusters_after_min = d.pop("delete_idle_clusters_after_min", UNSET)

        queue_wait_alert_min = d.pop("queue_wait_alert_min", UNSET)

        hang_k = d.pop("hang_k", UNSET)

        hang_floor_s = d.pop("hang_floor_s", UNSET)

        restart_on_hang = d.pop("restart_on_hang", UNSET)

        patched_policy_request = cls(
            output_prefix=output_prefix,
            service_accounts=service_accounts,
            networks=networks,
            reservations=reservations,
            allow_web_access=allow_web_access,
            delete_idle_clusters_after_min=delete_idle_clusters_after_min,
            queue_wait_alert_min=queue_wait_alert_min,
            hang_k=hang_k,
            hang_floor_s=hang_floor_s,
            restart_on_hang=restart_on_hang,
        )

        patched_policy_request.additional_properties = d
        return patched_policy_request

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
