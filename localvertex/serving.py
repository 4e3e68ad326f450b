"""The emulator's serving half wired together: Model Registry, endpoints, predictions, their
operations and admin calls, sharing the jobs' SQLite file and fault injector (server.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import grpc

from localvertex import endpoints_service, models_service, operations, prediction_service
from localvertex.admin.faults import FaultInjector
from localvertex.admin.service import SERVICE as ADMIN_SERVICE
from localvertex.admin.service import decode, encode
from localvertex.config import Settings
from localvertex.deployments import Deployments
from localvertex.endpointstore import ServingStore
from localvertex.serving_admin import ServingAdmin

log = logging.getLogger(__name__)


class Serving:
    def __init__(self, settings: Settings, faults: FaultInjector) -> None:
        self.faults = faults
        self.store = ServingStore(settings.db_path)
        self.operations = operations.Operations(self.store)
        self.deployments = Deployments(settings, self.store)
        self.models = models_service.ModelService(self.store, self.operations)
        self.endpoints = endpoints_service.EndpointService(
            self.store, self.operations, self.deployments, self.models
        )
        self.predictions = prediction_service.PredictionService(self.endpoints, self.deployments)
        self.admin = ServingAdmin(self.deployments)

    def handlers(self, unary: Callable[..., grpc.RpcMethodHandler]) -> list[grpc.GenericRpcHandler]:
        """Generic handlers for server.add_generic_rpc_handlers; `unary` is server.unary."""
        services = {
            endpoints_service.ENDPOINT_SERVICE: self.endpoints.methods(),
            models_service.MODEL_SERVICE: self.models.methods(),
            prediction_service.SERVICE: self.predictions.methods(),
            operations.SERVICE: self.operations.methods(),
        }
        handlers = [
            grpc.method_handlers_generic_handler(
                service,
                {name: unary(name, fn, cls.FromString, faults=self.faults)
                 for name, (fn, cls) in methods.items()},
            )
            for service, methods in services.items()
        ]
        # Same service name as admin_service's: gRPC asks each generic handler in turn.
        handlers.append(grpc.method_handlers_generic_handler(ADMIN_SERVICE, {
            name: unary(name, fn, decode, encode)
            for name, fn in self.admin.methods().items()
        }))
        return handlers

    def start(self) -> None:
        """After the job manager's start: it kills replicas an earlier emulator left behind."""
        abandoned = self.operations.abandon_unfinished()
        if abandoned:
            log.info("%d serving operations were cut short by the last emulator stop", abandoned)
        self.deployments.resume()

    def stop(self) -> None:
        self.deployments.shutdown()
        self.store.close()
