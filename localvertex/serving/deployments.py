"""The running side of endpoints: one ReplicaSet per deployed model, and the extra latency an
admin call adds to an endpoint's predictions (to slow it down on purpose in tests).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable

from localvertex.config import Settings
from localvertex.core.store import Store
from localvertex.serving.model_servers import DeploymentSpec, ReplicaSet
from localvertex.serving.store import EndpointPb, ModelPb

log = logging.getLogger(__name__)


def endpoint_id(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def spec_for(
    project: str, endpoint_name: str, deployed, model: ModelPb  # type: ignore[valid-type]
) -> DeploymentSpec:
    machine = deployed.dedicated_resources.machine_spec
    accelerator = ""
    if machine.accelerator_type:
        enum = machine.DESCRIPTOR.fields_by_name["accelerator_type"].enum_type
        accelerator = enum.values_by_number[machine.accelerator_type].name
    return DeploymentSpec(
        project=project,
        endpoint_id=endpoint_id(endpoint_name),
        deployed_model_id=deployed.id,
        model=model,
        machine_type=machine.machine_type,
        accelerator_type=accelerator,
    )


class Deployments:
    def __init__(self, settings: Settings, endpoints: Store,
                 model_of: Callable[[str, str], ModelPb | None]) -> None:  # type: ignore[valid-type]
        self.settings = settings
        self.endpoints = endpoints
        # The version of a model a DeployedModel serves (its model, model_version_id), or None.
        self.model_of = model_of
        self._sets: dict[tuple[str, str], ReplicaSet] = {}
        self._turns: dict[tuple[str, str], itertools.count[int]] = {}
        self._extra_ms: dict[str, float] = {}
        self._lock = threading.Lock()

    # -- replica sets --------------------------------------------------------------------------

    def start(self, endpoint_name: str, spec: DeploymentSpec, count: int) -> ReplicaSet:
        replicas = ReplicaSet(self.settings, spec, count)
        with self._lock:
            self._sets[(endpoint_name, spec.deployed_model_id)] = replicas
            self._turns[(endpoint_name, spec.deployed_model_id)] = itertools.count()
        replicas.start()
        return replicas

    def get(self, endpoint_name: str, deployed_model_id: str) -> ReplicaSet | None:
        with self._lock:
            return self._sets.get((endpoint_name, deployed_model_id))

    def stop(self, endpoint_name: str, deployed_model_id: str) -> None:
        with self._lock:
            replicas = self._sets.pop((endpoint_name, deployed_model_id), None)
            self._turns.pop((endpoint_name, deployed_model_id), None)
        if replicas is not None:
            replicas.stop()

    def next_port(self, endpoint_name: str, deployed_model_id: str) -> int | None:
        """A ready replica's port, taking turns (round robin)."""
        with self._lock:
            replicas = self._sets.get((endpoint_name, deployed_model_id))
            turns = self._turns.get((endpoint_name, deployed_model_id))
        if replicas is None or turns is None:
            return None
        ports = replicas.ready_ports()
        return ports[next(turns) % len(ports)] if ports else None

    def resume(self) -> None:
        """Start the replicas of every model deployed when an earlier emulator stopped."""
        for endpoint in self.endpoints.select():
            project = endpoint.name.split("/")[1]
            for deployed in endpoint.deployed_models:
                model = self.model_of(deployed.model, deployed.model_version_id)
                if model is None:
                    log.warning("endpoint %s: model %s is gone; not redeployed",
                                endpoint.name, deployed.model)
                    continue
                log.info("endpoint %s: restarting deployed model %s", endpoint.name, deployed.id)
                self.start(endpoint.name, spec_for(project, endpoint.name, deployed, model),
                           max(1, deployed.dedicated_resources.min_replica_count))

    def shutdown(self) -> None:
        with self._lock:
            sets = list(self._sets.values())
            self._sets.clear()
            self._turns.clear()
        for replicas in sets:
            replicas.stop(grace_s=min(self.settings.cancel_grace_s, 3.0))

    # -- injected latency ------------------------------------------------------------------------

    def set_extra_latency(self, endpoint_id_: str, extra_ms: float) -> None:
        with self._lock:
            if extra_ms <= 0:
                self._extra_ms.pop(endpoint_id_, None)
            else:
                self._extra_ms[endpoint_id_] = extra_ms

    def extra_latency_s(self, endpoint_name: str) -> float:
        with self._lock:
            return self._extra_ms.get(endpoint_id(endpoint_name), 0.0) / 1000.0

    def describe(self, endpoint: EndpointPb) -> dict:  # type: ignore[valid-type]
        """For the admin service: each deployed model's replicas."""
        out = {}
        for deployed in endpoint.deployed_models:
            replicas = self.get(endpoint.name, deployed.id)
            out[deployed.id] = {
                "ready_ports": replicas.ready_ports() if replicas else [],
                "pids": replicas.pids() if replicas else [],
            }
        return out
