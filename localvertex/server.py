"""The emulator's gRPC server: every room's services on one port (JobService with the tuning
jobs, PipelineService's TrainingPipelines, PersistentResourceService in v1 and v1beta1,
ModelService, EndpointService, PredictionService (its streaming RPCs in v1 and v1beta1),
google.longrunning.Operations, LoggingServiceV2, Cloud Monitoring's ListTimeSeries, CloudQuotas,
Artifact Registry), and the admin service on a port of its own, wired together. Both answer
only calls that carry the emulator's token (auth.py): the control plane holds it, replicas
never get it.

No generated servicers: each method is a generic handler that (de)serializes Google's own
protobuf messages, so clients see exactly the wire protocol of aiplatform.googleapis.com,
logging.googleapis.com and monitoring.googleapis.com.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import replace

import grpc
from google.rpc import status_pb2

from contract.labels import TEAM
from localvertex import auth
from localvertex.admin.faults import FaultInjector
from localvertex.admin.service import SERVICE as ADMIN_SERVICE
from localvertex.admin.service import AdminService, decode, encode
from localvertex.cloudlogging.service import SERVICE as LOGGING_SERVICE
from localvertex.cloudlogging.service import LoggingService
from localvertex.cloudlogging.store import LogStore
from localvertex.clusters.service import SERVICE as PERSISTENT_RESOURCE_SERVICE
from localvertex.clusters.service import PersistentResourceService
from localvertex.config import Settings
from localvertex.core.api_versions import v1beta1_service
from localvertex.core.errors import ApiError
from localvertex.core.operations import SERVICE as OPERATIONS_SERVICE
from localvertex.core.operations import Operations
from localvertex.jobs.manager import JobManager
from localvertex.jobs.service import SERVICE as JOB_SERVICE
from localvertex.jobs.service import JobService
from localvertex.jobs.store import JobStore
from localvertex.monitoring.sampler import Sampler
from localvertex.monitoring.series import MetricStore
from localvertex.monitoring.service import SERVICE as MONITORING_SERVICE
from localvertex.monitoring.service import MetricService
from localvertex.pipelines.service import SERVICE as PIPELINE_SERVICE
from localvertex.pipelines.service import TrainingPipelines
from localvertex.pipelines.store import PipelineStore
from localvertex.quotas.capacity import parse_limit
from localvertex.quotas.request_rate import RequestRateQuota
from localvertex.quotas.service import SERVICE as QUOTAS_SERVICE
from localvertex.quotas.service import QuotasService
from localvertex.replicas.sandbox import describe, prepare
from localvertex.serving.artifact_registry import SERVICE as ARTIFACT_REGISTRY_SERVICE
from localvertex.serving.artifact_registry import ArtifactRegistryService
from localvertex.serving.wiring import Serving
from localvertex.storage import doors
from localvertex.storage.server import StorageService
from localvertex.tuning.service import TuningJobs
from localvertex.tuning.store import TuningStore

log = logging.getLogger(__name__)


def _abort(context: grpc.ServicerContext, exc: ApiError) -> None:
    if exc.details:
        # google.rpc.Status with details travels in this trailer (what grpcio-status does);
        # google-api-core reads it into the exception's `details` / `reason`.
        status = status_pb2.Status(code=exc.code.value[0], message=exc.message)
        for detail in exc.details:
            status.details.add().Pack(detail)
        context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
    context.abort(exc.code, exc.message)


def _serialize(message) -> bytes:
    return message.SerializeToString()


def unary(
    method: str,
    fn: Callable,
    deserialize: Callable[[bytes], object],
    serialize: Callable[[object], bytes] = _serialize,
    faults: FaultInjector | None = None,
) -> grpc.RpcMethodHandler:
    def handle(request, context: grpc.ServicerContext):
        try:
            if faults is not None:
                faults.check(method)
            return fn(request, context)
        except ApiError as exc:
            _abort(context, exc)
        except Exception:
            log.exception("%s failed", method)
            context.abort(grpc.StatusCode.INTERNAL, f"Internal error in {method}.")

    return grpc.unary_unary_rpc_method_handler(
        handle, request_deserializer=deserialize, response_serializer=serialize
    )


def server_stream(
    method: str,
    fn: Callable,
    deserialize: Callable[[bytes], object],
    faults: FaultInjector | None = None,
) -> grpc.RpcMethodHandler:
    """One request, a stream of answers (StreamRawPredict, ChatCompletions)."""
    def handle(request, context: grpc.ServicerContext):
        try:
            if faults is not None:
                faults.check(method)
            yield from fn(request, context)
        except ApiError as exc:
            _abort(context, exc)
        except Exception:
            log.exception("%s failed", method)
            context.abort(grpc.StatusCode.INTERNAL, f"Internal error in {method}.")

    return grpc.unary_stream_rpc_method_handler(
        handle, request_deserializer=deserialize, response_serializer=_serialize
    )


def bidi_stream(
    method: str,
    fn: Callable,
    deserialize: Callable[[bytes], object],
    faults: FaultInjector | None = None,
) -> grpc.RpcMethodHandler:
    def handle(requests: Iterator, context: grpc.ServicerContext):
        try:
            if faults is not None:
                faults.check(method)
            yield from fn(requests, context)
        except ApiError as exc:
            _abort(context, exc)
        except Exception:
            log.exception("%s failed", method)
            context.abort(grpc.StatusCode.INTERNAL, f"Internal error in {method}.")

    return grpc.stream_stream_rpc_method_handler(
        handle, request_deserializer=deserialize, response_serializer=_serialize
    )


class Emulator:
    """Everything the emulator runs, wired together; start() and stop() it."""

    def __init__(self, settings: Settings) -> None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        # Cloud Storage first: its port (a free one for 0) is what replicas are told.
        self.storage = StorageService(settings.gcs_dir, settings.data_dir / "storage-uploads",
                                      settings.host, settings.storage_port)
        settings = replace(settings, storage_port=self.storage.port)
        self.settings = settings
        settings.jobs_dir.mkdir(parents=True, exist_ok=True)
        self.jobs = JobStore(settings.db_path)
        self.logs = LogStore(settings.db_path)
        who = settings.replica_identity
        prepare(settings.data_dir, who)
        # What every caller must present (auth.py); replicas never see it.
        self.token = auth.load_or_create(settings.token_path)
        # One line devstack and the demo show as they start the emulator.
        log.log(logging.INFO if who else logging.WARNING, "%s", describe(who))
        self.manager = JobManager(settings, self.jobs, self.logs)
        for text in settings.quotas:
            self.manager.capacity.set_limit(*parse_limit(text))
        self.quotas = QuotasService(self.manager.capacity)
        self.images = ArtifactRegistryService()
        self.faults = FaultInjector()
        # Vertex's resource management requests per minute per region, on every aiplatform call.
        self.request_quota = RequestRateQuota(settings.crud_quota_per_minute)
        self.logging = LoggingService(
            self.logs, self.manager.clock, settings.logging_quota_per_minute,
            accept_job_writes=settings.accept_job_log_writes,
        )
        self.job_service = JobService(self.manager)
        # Cloud Monitoring's per-replica system metrics, sampled from the replicas' processes.
        self.metric_store = MetricStore()
        self.sampler = Sampler(self.manager.replica_pids, self.metric_store)
        self.monitoring = MetricService(self.metric_store)
        # HyperparameterTuningJobs: trials run as the manager's CustomJobs (tuning/runner.py).
        self.tuning_store = TuningStore(settings.db_path)
        self.tuning = TuningJobs(self.manager, self.tuning_store)
        self.admin = AdminService(self.manager, self.faults)
        # One google.longrunning.Operations answers for serving's and the clusters' operations.
        self.operations = Operations(settings.db_path)
        self.serving = Serving(settings, self.operations, self.token)
        # TrainingPipelines: their CustomJobs are the manager's, their Models serving's.
        self.pipeline_store = PipelineStore(settings.db_path)
        self.pipelines = TrainingPipelines(self.job_service, self.serving.models,
                                           self.pipeline_store)
        self.clusters = PersistentResourceService(
            settings.db_path, self.operations, settings.data_dir, settings.workdir,
            settings.pending_delay_s, who, self.token)
        self.manager.persistent_resource = self.clusters.running
        doors.register(settings.data_dir, self.storage, self._team_folders)

        check = auth.TokenCheck(self.token)
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=settings.max_workers, thread_name_prefix="rpc"),
            interceptors=[check],
        )
        self.admin_server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="admin"),
            interceptors=[check],
        )
        clusters_v1beta1, clusters_v1beta1_methods = v1beta1_service(
            PERSISTENT_RESOURCE_SERVICE, self.clusters.methods(), self.operations.mark_v1beta1)
        services = {
            JOB_SERVICE: {**self.job_service.methods(), **self.tuning.methods()},
            PIPELINE_SERVICE: self.pipelines.methods(),
            PERSISTENT_RESOURCE_SERVICE: self.clusters.methods(),
            # v1beta1 (the preview SDK's) answered by the v1 implementation.
            clusters_v1beta1: clusters_v1beta1_methods,
            LOGGING_SERVICE: self.logging.methods(),
            MONITORING_SERVICE: self.monitoring.methods(),
            QUOTAS_SERVICE: self.quotas.methods(),
            ARTIFACT_REGISTRY_SERVICE: self.images.methods(),
            OPERATIONS_SERVICE: self.operations.methods(),
            **self.serving.services(),
        }
        handlers = {
            service: {name: unary(name, self.request_quota.guard(service, fn), cls.FromString,
                                  faults=self.faults)
                      for name, (fn, cls) in methods.items()}
            for service, methods in services.items()
        }
        handlers[LOGGING_SERVICE].update(
            {
                name: bidi_stream(name, fn, cls.FromString, faults=self.faults)
                for name, (fn, cls) in self.logging.streaming_methods().items()
            }
        )
        # PredictionService's server-streaming RPCs, v1's and v1beta1's (ChatCompletions is
        # v1beta1's alone); predictions are outside the request quota.
        for service, methods in self.serving.predictions.streaming_methods().items():
            handlers.setdefault(service, {}).update({
                name: server_stream(name, fn, cls.FromString, faults=self.faults)
                for name, (fn, cls) in methods.items()})
        self.server.add_generic_rpc_handlers(tuple(
            grpc.method_handlers_generic_handler(service, methods)
            for service, methods in handlers.items()
        ))
        # The admin service takes JSON, is never faulted, and has a port of its own: what Vertex
        # does not offer is never on Vertex's port.
        self.admin_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            ADMIN_SERVICE,
            {name: unary(name, fn, decode, encode)
             for name, fn in {**self.admin.methods(), **self.images.admin_methods(),
                              **self.serving.admin.methods()}.items()}),))
        self.port = self.server.add_insecure_port(f"{settings.host}:{settings.port}")
        if self.port == 0:
            raise OSError(f"cannot listen on {settings.host}:{settings.port}")
        self.admin_port = self.admin_server.add_insecure_port(
            f"{settings.host}:{settings.admin_port}")
        if self.admin_port == 0:
            raise OSError(f"cannot listen on {settings.host}:{settings.admin_port} (admin)")

    def _team_folders(self, team: str) -> list[str]:
        """The output folders of the team's jobs ('' = the unlabelled jobs'): what its
        replicas may touch in Cloud Storage (storage/access.py)."""
        return [folder for record in self.jobs.select()
                if record.job.labels.get(TEAM, "") == team
                and (folder := record.job.job_spec.base_output_directory.output_uri_prefix)]

    @property
    def storage_address(self) -> str:
        """STORAGE_EMULATOR_HOST for the control plane."""
        return f"http://{self.settings.host}:{self.storage.port}"

    @property
    def address(self) -> str:
        return f"{self.settings.host}:{self.port}"

    @property
    def admin_address(self) -> str:
        return f"{self.settings.host}:{self.admin_port}"

    def start(self) -> None:
        self.manager.resume()
        self.tuning.resume()
        self.pipelines.resume()
        abandoned = self.operations.abandon_unfinished()
        if abandoned:
            log.info("%d operations were cut short by the last emulator stop", abandoned)
        # After the job manager's resume: it kills replicas an earlier emulator left behind.
        self.serving.start()
        self.clusters.resume()
        self.server.start()
        self.admin_server.start()
        self.storage.start()
        # Synthetic replicas have no processes to sample (and thousands of jobs to list).
        if not self.settings.synthetic:
            self.sampler.start()
        log.info("localvertex listening on %s, its admin service on %s, Cloud Storage on %s "
                 "(data in %s; callers need the token in %s)", self.address, self.admin_address,
                 self.storage_address, self.settings.data_dir, self.settings.token_path)
        log.info("dedicated endpoints' REST (Google's SDK raw_predict) on https://%s, its "
                 "certificate %s (REQUESTS_CA_BUNDLE)", self.serving.rest.address,
                 self.serving.rest.cert_path)

    def stop(self) -> None:
        log.info("localvertex stopping")
        self.logging.stopping.set()
        self.sampler.stop()
        self.admin_server.stop(grace=0)
        doors.unregister(self.settings.data_dir)
        self.server.stop(grace=1).wait(5)
        self.clusters.shutdown()
        self.serving.stop()
        self.tuning.shutdown()
        self.pipelines.shutdown()
        self.manager.shutdown()
        self.storage.stop()
        self.clusters.close()
        self.operations.close()
        self.tuning_store.close()
        self.pipeline_store.close()
        self.logs.close()
        self.jobs.close()
        log.info("localvertex stopped")
