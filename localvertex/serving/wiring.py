"""The emulator's serving half wired together: Model Registry, endpoints, predictions and the
admin calls for endpoints, sharing the jobs' SQLite file and the long-running operations
(server.py serves them), and the HTTPS listener where dedicated endpoints take Google's SDK's
REST calls (rest.py)."""

from __future__ import annotations

from localvertex.config import Settings
from localvertex.core.operations import Operations
from localvertex.serving.admin import ServingAdmin
from localvertex.serving.deployments import Deployments
from localvertex.serving.endpoints import ENDPOINT_SERVICE, EndpointService
from localvertex.serving.model_versions import ModelVersions
from localvertex.serving.models import MODEL_SERVICE, ModelService
from localvertex.serving.predictions import SERVICE as PREDICTION_SERVICE
from localvertex.serving.predictions import PredictionService
from localvertex.serving.rest import RestListener
from localvertex.serving.store import endpoint_store, model_store


class Serving:
    def __init__(self, settings: Settings, operations: Operations, token: str) -> None:
        # Bound first: its address is what dedicated endpoints are given.
        self.rest = RestListener(settings.data_dir, settings.host, settings.https_port, token)
        self.model_store = model_store(settings.db_path)
        self.endpoint_store = endpoint_store(settings.db_path)
        self.model_versions = ModelVersions(settings.db_path)
        self.models = ModelService(self.model_store, self.model_versions, self.endpoint_store,
                                   operations)
        self.deployments = Deployments(settings, self.endpoint_store, self.models.version_of)
        self.endpoints = EndpointService(
            self.endpoint_store, operations, self.deployments, self.models,
            dedicated_dns=self.rest.address,
        )
        self.predictions = PredictionService(self.endpoints, self.deployments)
        self.rest.predictions = self.predictions
        self.admin = ServingAdmin(self.deployments)

    def services(self) -> dict[str, dict[str, tuple[object, object]]]:
        """gRPC service name -> its methods (name -> (handler, request message class))."""
        return {
            ENDPOINT_SERVICE: self.endpoints.methods(),
            MODEL_SERVICE: self.models.methods(),
            PREDICTION_SERVICE: self.predictions.methods(),
        }

    def start(self) -> None:
        """After the job manager's start: it kills replicas an earlier emulator left behind."""
        self.deployments.resume()
        self.rest.start()

    def stop(self) -> None:
        self.rest.stop()
        self.deployments.shutdown()
        self.model_store.close()
        self.model_versions.close()
        self.endpoint_store.close()
