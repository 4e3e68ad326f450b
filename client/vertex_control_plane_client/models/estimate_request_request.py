from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.job_strategy_enum import JobStrategyEnum
from ..models.precision_enum import PrecisionEnum
from ..models.scheduling_strategy_enum import SchedulingStrategyEnum
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.batch_request import BatchRequest
    from ..models.deep_speed_request import DeepSpeedRequest
    from ..models.estimate_request_request_encryption_spec import (
        EstimateRequestRequestEncryptionSpec,
    )
    from ..models.estimate_request_request_env import EstimateRequestRequestEnv
    from ..models.estimate_request_request_job_spec_extra import (
        EstimateRequestRequestJobSpecExtra,
    )
    from ..models.estimate_request_request_labels import EstimateRequestRequestLabels
    from ..models.fsdp_request import FsdpRequest
    from ..models.model_request import ModelRequest
    from ..models.nfs_mount_request import NfsMountRequest
    from ..models.parallelism_request import ParallelismRequest
    from ..models.pool_request import PoolRequest
    from ..models.python_package_request import PythonPackageRequest
    from ..models.recovery_request import RecoveryRequest
    from ..models.tpu_request import TpuRequest


T = TypeVar("T", bound="EstimateRequestRequest")


@_attrs_define
class EstimateRequestRequest:
    """The job in the compose form's fields, and how long it runs: hours, or steps and
    step_time_s together; neither: until its timeout (what a budget reserves).

        Attributes:
            name (str):
            chief (PoolRequest): Refuses keys it does not know, so a typo is an error instead of a silent default.
            team (str | Unset): Team slug; optional when you belong to one team.
            region (str | Unset): Default: us-central1
            strategy (JobStrategyEnum | Unset): * `ddp` - ddp
                * `fsdp` - fsdp
                * `zero1` - zero1
                * `zero2` - zero2
                * `zero3` - zero3
                * `tpu_jax` - tpu_jax
                * `tpu_xla` - tpu_xla Default: JobStrategyEnum.DDP.
            precision (None | PrecisionEnum | Unset):
            scheduling_strategy (SchedulingStrategyEnum | Unset): * `STANDARD` - STANDARD
                * `SPOT` - SPOT
                * `FLEX_START` - FLEX_START
            spot (bool | Unset): Older spelling of scheduling_strategy SPOT.
            image_uri (str | Unset):
            python_package (PythonPackageRequest | Unset): Refuses keys it does not know, so a typo is an error instead of a
                silent default.
            image_entrypoint (bool | Unset): Run the image's ENTRYPOINT.
            command (list[str] | Unset): Empty: the built-in trainer launcher.
            args (list[str] | Unset):
            env (EstimateRequestRequestEnv | Unset):
            workers (None | PoolRequest | Unset): Absent or null: no workers pool.
            reduction_server (None | PoolRequest | Unset): workerPoolSpecs[2]: Vertex's Reduction Server.
            parameter_servers (None | PoolRequest | Unset): workerPoolSpecs[2]: parameter servers.
            evaluators (None | PoolRequest | Unset): workerPoolSpecs[3].
            restart_job_on_worker_restart (bool | None | Unset):
            disable_retries (bool | Unset):
            timeout_hours (float | Unset):
            max_wait_hours (float | Unset): FLEX_START: 0 waits without limit.
            base_output_directory (str | Unset):
            nfs_mounts (list[NfsMountRequest] | Unset):
            network (str | Unset):
            reserved_ip_ranges (list[str] | Unset):
            psc_network_attachment (str | Unset):
            enable_web_access (bool | Unset):
            enable_dashboard_access (bool | Unset):
            service_account (str | Unset):
            labels (EstimateRequestRequestLabels | Unset):
            batch (BatchRequest | Unset): Refuses keys it does not know, so a typo is an error instead of a silent default.
            fsdp (FsdpRequest | Unset): Refuses keys it does not know, so a typo is an error instead of a silent default.
            deepspeed (DeepSpeedRequest | Unset): Refuses keys it does not know, so a typo is an error instead of a silent
                default.
            parallelism (ParallelismRequest | Unset): Refuses keys it does not know, so a typo is an error instead of a
                silent default.
            tpu (TpuRequest | Unset): Refuses keys it does not know, so a typo is an error instead of a silent default.
            model (ModelRequest | Unset): Refuses keys it does not know, so a typo is an error instead of a silent default.
            tensorboard (str | Unset): A Vertex TensorBoard the job writes to: projects/<p>/locations/<l>/tensorboards/<id>
            experiment (str | Unset): A Vertex Experiment:
                projects/<p>/locations/<l>/metadataStores/<store>/contexts/<experiment>
            experiment_run (str | Unset): The experiment's run:
                projects/<p>/locations/<l>/metadataStores/<store>/contexts/<experiment>-<run>
            job_spec_extra (EstimateRequestRequestJobSpecExtra | Unset): CustomJobSpec fields passed through: tensorboard,
                experiment, ...
            encryption_spec (EstimateRequestRequestEncryptionSpec | Unset):
            recovery (None | RecoveryRequest | Unset):
            priority (str | Unset): low, normal or high: the order in the control plane's queue (at most the team's cap;
                used when the site's admission queue is on).
            framework (str | Unset): Which framework's lines to read from a job of your own (hf_trainer, lightning,
                accelerate, deepspeed, torchtitan, maxtext...); leave it out to tell from the command and the first lines.
            hours (float | str | Unset):
            steps (int | Unset):
            step_time_s (float | str | Unset):
    """

    name: str
    chief: PoolRequest
    team: str | Unset = UNSET
    region: str | Unset = UNSET
    strategy: JobStrategyEnum | Unset = JobStrategyEnum.DDP
    precision: None | PrecisionEnum | Unset = UNSET
    scheduling_strategy: SchedulingStrategyEnum | Unset = UNSET
    spot: bool | Unset = UNSET
    image_uri: str | Unset = UNSET
    python_package: PythonPackageRequest | Unset = UNSET
    image_entrypoint: bool | Unset = UNSET
    command: list[str] | Unset = UNSET
    args: list[str] | Unset = UNSET
    env: EstimateRequestRequestEnv | Unset = UNSET
    workers: None | PoolRequest | Unset = UNSET
    reduction_server: None | PoolRequest | Unset = UNSET
    parameter_servers: None | PoolRequest | Unset = UNSET
    evaluators: None | PoolRequest | Unset = UNSET
    restart_job_on_worker_restart: bool | None | Unset = UNSET
    disable_retries: bool | Unset = UNSET
    timeout_hours: float | Unset = UNSET
    max_wait_hours: float | Unset = UNSET
    base_output_directory: str | Unset = UNSET
    nfs_mounts: list[NfsMountRequest] | Unset = UNSET
    network: str | Unset = UNSET
    reserved_ip_ranges: list[str] | Unset = UNSET
    psc_network_attachment: str | Unset = UNSET
    enable_web_access: bool | Unset = UNSET
    enable_dashboard_access: bool | Unset = UNSET
    service_account: str | Unset = UNSET
    labels: EstimateRequestRequestLabels | Unset = UNSET
    batch: BatchRequest | Unset = UNSET
    fsdp: FsdpRequest | Unset = UNSET
    deepspeed: DeepSpeedRequest | Unset = UNSET
    parallelism: ParallelismRequest | Unset = UNSET
    tpu: TpuRequest | Unset = UNSET
    model: ModelRequest | Unset = UNSET
    tensorboard: str | Unset = UNSET
    experiment: str | Unset = UNSET
    experiment_run: str | Unset = UNSET
    job_spec_extra: EstimateRequestRequestJobSpecExtra | Unset = UNSET
    encryption_spec: EstimateRequestRequestEncryptionSpec | Unset = UNSET
    recovery: None | RecoveryRequest | Unset = UNSET
    priority: str | Unset = UNSET
    framework: str | Unset = UNSET
    hours: float | str | Unset = UNSET
    steps: int | Unset = UNSET
    step_time_s: float | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.pool_request import PoolRequest  # noqa: PLC0415
        from ..models.recovery_request import RecoveryRequest  # noqa: PLC0415

        name = self.name

        chief = self.chief.to_dict()

        team = self.team

        region = self.region

        strategy: str | Unset = UNSET
        if not isinstance(self.strategy, Unset):
            strategy = self.strategy.value

        precision: None | str | Unset
        if isinstance(self.precision, Unset):
            precision = UNSET
        elif isinstance(self.precision, PrecisionEnum):
            precision = self.precision.value
        else:
            precision = self.precision

        scheduling_strategy: str | Unset = UNSET
        if not isinstance(self.scheduling_strategy, Unset):
            scheduling_strategy = self.scheduling_strategy.value

        spot = self.spot

        image_uri = self.image_uri

        python_package: dict[str, Any] | Unset = UNSET
        if not isinstance(self.python_package, Unset):
            python_package = self.python_package.to_dict()

        image_entrypoint = self.image_entrypoint

        command: list[str] | Unset = UNSET
        if not isinstance(self.command, Unset):
            command = self.command

        args: list[str] | Unset = UNSET
        if not isinstance(self.args, Unset):
            args = self.args

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        workers: dict[str, Any] | None | Unset
        if isinstance(self.workers, Unset):
            workers = UNSET
        elif isinstance(self.workers, PoolRequest):
            workers = self.workers.to_dict()
        else:
            workers = self.workers

        reduction_server: dict[str, Any] | None | Unset
        if isinstance(self.reduction_server, Unset):
            reduction_server = UNSET
        elif isinstance(self.reduction_server, PoolRequest):
            reduction_server = self.reduction_server.to_dict()
        else:
            reduction_server = self.reduction_server

        parameter_servers: dict[str, Any] | None | Unset
        if isinstance(self.parameter_servers, Unset):
            parameter_servers = UNSET
        elif isinstance(self.parameter_servers, PoolRequest):
            parameter_servers = self.parameter_servers.to_dict()
        else:
            parameter_servers = self.parameter_servers

        evaluators: dict[str, Any] | None | Unset
        if isinstance(self.evaluators, Unset):
            evaluators = UNSET
        elif isinstance(self.evaluators, PoolRequest):
            evaluators = self.evaluators.to_dict()
        else:
            evaluators = self.evaluators

        restart_job_on_worker_restart: bool | None | Unset
        if isinstance(self.restart_job_on_worker_restart, Unset):
            restart_job_on_worker_restart = UNSET
        else:
            restart_job_on_worker_restart = self.restart_job_on_worker_restart

        disable_retries = self.disable_retries

        timeout_hours = self.timeout_hours

        max_wait_hours = self.max_wait_hours

        base_output_directory = self.base_output_directory

        nfs_mounts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.nfs_mounts, Unset):
            nfs_mounts = []
            for nfs_mounts_item_data in self.nfs_mounts:
                nfs_mounts_item = nfs_mounts_item_data.to_dict()
                nfs_mounts.append(nfs_mounts_item)

        network = self.network

        reserved_ip_ranges: list[str] | Unset = UNSET
        if not isinstance(self.reserved_ip_ranges, Unset):
            reserved_ip_ranges = self.reserved_ip_ranges

        psc_network_attachment = self.psc_network_attachment

        enable_web_access = self.enable_web_access

        enable_dashboard_access = self.enable_dashboard_access

        service_account = self.service_account

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        batch: dict[str, Any] | Unset = UNSET
        if not isinstance(self.batch, Unset):
            batch = self.batch.to_dict()

        fsdp: dict[str, Any] | Unset = UNSET
        if not isinstance(self.fsdp, Unset):
            fsdp = self.fsdp.to_dict()

        deepspeed: dict[str, Any] | Unset = UNSET
        if not isinstance(self.deepspeed, Unset):
            deepspeed = self.deepspeed.to_dict()

        parallelism: dict[str, Any] | Unset = UNSET
        if not isinstance(self.parallelism, Unset):
            parallelism = self.parallelism.to_dict()

        tpu: dict[str, Any] | Unset = UNSET
        if not isinstance(self.tpu, Unset):
            tpu = self.tpu.to_dict()

        model: dict[str, Any] | Unset = UNSET
        if not isinstance(self.model, Unset):
            model = self.model.to_dict()

        tensorboard = self.tensorboard

        experiment = self.experiment

        experiment_run = self.experiment_run

        job_spec_extra: dict[str, Any] | Unset = UNSET
        if not isinstance(self.job_spec_extra, Unset):
            job_spec_extra = self.job_spec_extra.to_dict()

        encryption_spec: dict[str, Any] | Unset = UNSET
        if not isinstance(self.encryption_spec, Unset):
            encryption_spec = self.encryption_spec.to_dict()

        recovery: dict[str, Any] | None | Unset
        if isinstance(self.recovery, Unset):
            recovery = UNSET
        elif isinstance(self.recovery, RecoveryRequest):
            recovery = self.recovery.to_dict()
        else:
            recovery = self.recovery

        priority = self.priority

        framework = self.framework

        hours: float | str | Unset
        if isinstance(self.hours, Unset):
            hours = UNSET
        else:
            hours = self.hours

        steps = self.steps

        step_time_s: float | str | Unset
        if isinstance(self.step_time_s, Unset):
            step_time_s = UNSET
        else:
            step_time_s = self.step_time_s

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "chief": chief,
            }
        )
        if team is not UNSET:
            field_dict["team"] = team
        if region is not UNSET:
            field_dict["region"] = region
        if strategy is not UNSET:
            field_dict["strategy"] = strategy
        if precision is not UNSET:
            field_dict["precision"] = precision
        if scheduling_strategy is not UNSET:
            field_dict["scheduling_strategy"] = scheduling_strategy
        if spot is not UNSET:
            field_dict["spot"] = spot
        if image_uri is not UNSET:
            field_dict["image_uri"] = image_uri
        if python_package is not UNSET:
            field_dict["python_package"] = python_package
        if image_entrypoint is not UNSET:
            field_dict["image_entrypoint"] = image_entrypoint
        if command is not UNSET:
            field_dict["command"] = command
        if args is not UNSET:
            field_dict["args"] = args
        if env is not UNSET:
            field_dict["env"] = env
        if workers is not UNSET:
            field_dict["workers"] = workers
        if reduction_server is not UNSET:
            field_dict["reduction_server"] = reduction_server
        if parameter_servers is not UNSET:
            field_dict["parameter_servers"] = parameter_servers
        if evaluators is not UNSET:
            field_dict["evaluators"] = evaluators
        if restart_job_on_worker_restart is not UNSET:
            field_dict["restart_job_on_worker_restart"] = restart_job_on_worker_restart
        if disable_retries is not UNSET:
            field_dict["disable_retries"] = disable_retries
        if timeout_hours is not UNSET:
            field_dict["timeout_hours"] = timeout_hours
        if max_wait_hours is not UNSET:
            field_dict["max_wait_hours"] = max_wait_hours
        if base_output_directory is not UNSET:
            field_dict["base_output_directory"] = base_output_directory
        if nfs_mounts is not UNSET:
            field_dict["nfs_mounts"] = nfs_mounts
        if network is not UNSET:
            field_dict["network"] = network
        if reserved_ip_ranges is not UNSET:
            field_dict["reserved_ip_ranges"] = reserved_ip_ranges
        if psc_network_attachment is not UNSET:
            field_dict["psc_network_attachment"] = psc_network_attachment
        if enable_web_access is not UNSET:
            field_dict["enable_web_access"] = enable_web_access
        if enable_dashboard_access is not UNSET:
            field_dict["enable_dashboard_access"] = enable_dashboard_access
        if service_account is not UNSET:
            field_dict["service_account"] = service_account
        if labels is not UNSET:
            field_dict["labels"] = labels
        if batch is not UNSET:
            field_dict["batch"] = batch
        if fsdp is not UNSET:
            field_dict["fsdp"] = fsdp
        if deepspeed is not UNSET:
            field_dict["deepspeed"] = deepspeed
        if parallelism is not UNSET:
            field_dict["parallelism"] = parallelism
        if tpu is not UNSET:
            field_dict["tpu"] = tpu
        if model is not UNSET:
            field_dict["model"] = model
        if tensorboard is not UNSET:
            field_dict["tensorboard"] = tensorboard
        if experiment is not UNSET:
            field_dict["experiment"] = experiment
        if experiment_run is not UNSET:
            field_dict["experiment_run"] = experiment_run
        if job_spec_extra is not UNSET:
            field_dict["job_spec_extra"] = job_spec_extra
        if encryption_spec is not UNSET:
            field_dict["encryption_spec"] = encryption_spec
        if recovery is not UNSET:
            field_dict["recovery"] = recovery
        if priority is not UNSET:
            field_dict["priority"] = priority
        if framework is not UNSET:
            field_dict["framework"] = framework
        if hours is not UNSET:
            field_dict["hours"] = hours
        if steps is not UNSET:
            field_dict["steps"] = steps
        if step_time_s is not UNSET:
            field_dict["step_time_s"] = step_time_s

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.batch_request import BatchRequest  # noqa: PLC0415
        from ..models.deep_speed_request import DeepSpeedRequest  # noqa: PLC0415
        from ..models.estimate_request_request_encryption_spec import (
            EstimateRequestRequestEncryptionSpec,  # noqa: PLC0415
        )
        from ..models.estimate_request_request_env import EstimateRequestRequestEnv  # noqa: PLC0415
        from ..models.estimate_request_request_job_spec_extra import (
            EstimateRequestRequestJobSpecExtra,  # noqa: PLC0415
        )
        from ..models.estimate_request_request_labels import (
            EstimateRequestRequestLabels,  # noqa: PLC0415
        )
        from ..models.fsdp_request import FsdpRequest  # noqa: PLC0415
        from ..models.model_request import ModelRequest  # noqa: PLC0415
        from ..models.nfs_mount_request import NfsMountRequest  # noqa: PLC0415
        from ..models.parallelism_request import ParallelismRequest  # noqa: PLC0415
        from ..models.pool_request import PoolRequest  # noqa: PLC0415
        from ..models.python_package_request import PythonPackageRequest  # noqa: PLC0415
        from ..models.recovery_request import RecoveryRequest  # noqa: PLC0415
        from ..models.tpu_request import TpuRequest  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        chief = PoolRequest.from_dict(d.pop("chief"))

        team = d.pop("team", UNSET)

        region = d.pop("region", UNSET)

        _strategy = d.pop("strategy", UNSET)
        strategy: JobStrategyEnum | Unset
        if isinstance(_strategy, Unset):
            strategy = UNSET
        else:
            strategy = JobStrategyEnum(_strategy)

        def _parse_precision(data: object) -> None | PrecisionEnum | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                precision_type_0 = PrecisionEnum(data)

                return precision_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PrecisionEnum | Unset, data)

        precision = _parse_precision(d.pop("precision", UNSET))

        _scheduling_strategy = d.pop("scheduling_strategy", UNSET)
        scheduling_strategy: SchedulingStrategyEnum | Unset
        if isinstance(_scheduling_strategy, Unset):
            scheduling_strategy = UNSET
        else:
            scheduling_strategy = SchedulingStrategyEnum(_scheduling_strategy)

        spot = d.pop("spot", UNSET)

        image_uri = d.pop("image_uri", UNSET)

        _python_package = d.pop("python_package", UNSET)
        python_package: PythonPackageRequest | Unset
        if isinstance(_python_package, Unset):
            python_package = UNSET
        else:
            python_package = PythonPackageRequest.from_dict(_python_package)

        image_entrypoint = d.pop("image_entrypoint", UNSET)

        command = cast(list[str], d.pop("command", UNSET))

        args = cast(list[str], d.pop("args", UNSET))

        _env = d.pop("env", UNSET)
        env: EstimateRequestRequestEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = EstimateRequestRequestEnv.from_dict(_env)

        def _parse_workers(data: object) -> None | PoolRequest | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                workers_type_1 = PoolRequest.from_dict(data)

                return workers_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PoolRequest | Unset, data)

        workers = _parse_workers(d.pop("workers", UNSET))

        def _parse_reduction_server(data: object) -> None | PoolRequest | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                reduction_server_type_1 = PoolRequest.from_dict(data)

                return reduction_server_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PoolRequest | Unset, data)

        reduction_server = _parse_reduction_server(d.pop("reduction_server", UNSET))

        def _parse_parameter_servers(data: object) -> None | PoolRequest | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                parameter_servers_type_1 = PoolRequest.from_dict(data)

                return parameter_servers_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PoolRequest | Unset, data)

        parameter_servers = _parse_parameter_servers(d.pop("parameter_servers", UNSET))

        def _parse_evaluators(data: object) -> None | PoolRequest | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                evaluators_type_1 = PoolRequest.from_dict(data)

                return evaluators_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PoolRequest | Unset, data)

        evaluators = _parse_evaluators(d.pop("evaluators", UNSET))

        def _parse_restart_job_on_worker_restart(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        restart_job_on_worker_restart = _parse_restart_job_on_worker_restart(
            d.pop("restart_job_on_worker_restart", UNSET)
        )

        disable_retries = d.pop("disable_retries", UNSET)

        timeout_hours = d.pop("timeout_hours", UNSET)

        max_wait_hours = d.pop("max_wait_hours", UNSET)

        base_output_directory = d.pop("base_output_directory", UNSET)

        _nfs_mounts = d.pop("nfs_mounts", UNSET)
        nfs_mounts: list[NfsMountRequest] | Unset = UNSET
        if _nfs_mounts is not UNSET:
            nfs_mounts = []
            for nfs_mounts_item_data in _nfs_mounts:
                nfs_mounts_item = NfsMountRequest.from_dict(nfs_mounts_item_data)

                nfs_mounts.append(nfs_mounts_item)

        network = d.pop("network", UNSET)

        reserved_ip_ranges = cast(list[str], d.pop("reserved_ip_ranges", UNSET))

        psc_network_attachment = d.pop("psc_network_attachment", UNSET)

        enable_web_access = d.pop("enable_web_access", UNSET)

        enable_dashboard_access = d.pop("enable_dashboard_access", UNSET)

        service_account = d.pop("service_account", UNSET)

        _labels = d.pop("labels", UNSET)
        labels: EstimateRequestRequestLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = EstimateRequestRequestLabels.from_dict(_labels)

        _batch = d.pop("batch", UNSET)
        batch: BatchRequest | Unset
        if isinstance(_batch, Unset):
            batch = UNSET
        else:
            batch = BatchRequest.from_dict(_batch)

        _fsdp = d.pop("fsdp", UNSET)
        fsdp: FsdpRequest | Unset
        if isinstance(_fsdp, Unset):
            fsdp = UNSET
        else:
            fsdp = FsdpRequest.from_dict(_fsdp)

        _deepspeed = d.pop("deepspeed", UNSET)
        deepspeed: DeepSpeedRequest | Unset
        if isinstance(_deepspeed, Unset):
            deepspeed = UNSET
        else:
            deepspeed = DeepSpeedRequest.from_dict(_deepspeed)

        _parallelism = d.pop("parallelism", UNSET)
        parallelism: ParallelismRequest | Unset
        if isinstance(_parallelism, Unset):
            parallelism = UNSET
        else:
            parallelism = ParallelismRequest.from_dict(_parallelism)

        _tpu = d.pop("tpu", UNSET)
        tpu: TpuRequest | Unset
        if isinstance(_tpu, Unset):
            tpu = UNSET
        else:
            tpu = TpuRequest.from_dict(_tpu)

        _model = d.pop("model", UNSET)
        model: ModelRequest | Unset
        if isinstance(_model, Unset):
            model = UNSET
        else:
            model = ModelRequest.from_dict(_model)

        tensorboard = d.pop("tensorboard", UNSET)

        experiment = d.pop("experiment", UNSET)

        experiment_run = d.pop("experiment_run", UNSET)

        _job_spec_extra = d.pop("job_spec_extra", UNSET)
        job_spec_extra: EstimateRequestRequestJobSpecExtra | Unset
        if isinstance(_job_spec_extra, Unset):
            job_spec_extra = UNSET
        else:
            job_spec_extra = EstimateRequestRequestJobSpecExtra.from_dict(_job_spec_extra)

        _encryption_spec = d.pop("encryption_spec", UNSET)
        encryption_spec: EstimateRequestRequestEncryptionSpec | Unset
        if isinstance(_encryption_spec, Unset):
            encryption_spec = UNSET
        else:
            encryption_spec = EstimateRequestRequestEncryptionSpec.from_dict(_encryption_spec)

        def _parse_recovery(data: object) -> None | RecoveryRequest | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                recovery_type_1 = RecoveryRequest.from_dict(data)

                return recovery_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RecoveryRequest | Unset, data)

        recovery = _parse_recovery(d.pop("recovery", UNSET))

        priority = d.pop("priority", UNSET)

        framework = d.pop("framework", UNSET)

        def _parse_hours(data: object) -> float | str | Unset:
            if isinstance(data, Unset):
                return data
            return cast(float | str | Unset, data)

        hours = _parse_hours(d.pop("hours", UNSET))

        steps = d.pop("steps", UNSET)

        def _parse_step_time_s(data: object) -> float | str | Unset:
            if isinstance(data, Unset):
                return data
            return cast(float | str | Unset, data)

        step_time_s = _parse_step_time_s(d.pop("step_time_s", UNSET))

        estimate_request_request = cls(
            name=name,
            chief=chief,
            team=team,
            region=region,
            strategy=strategy,
            precision=precision,
            scheduling_strategy=scheduling_strategy,
            spot=spot,
            image_uri=image_uri,
            python_package=python_package,
            image_entrypoint=image_entrypoint,
            command=command,
            args=args,
            env=env,
            workers=workers,
            reduction_server=reduction_server,
            parameter_servers=parameter_servers,
            evaluators=evaluators,
            restart_job_on_worker_restart=restart_job_on_worker_restart,
            disable_retries=disable_retries,
            timeout_hours=timeout_hours,
            max_wait_hours=max_wait_hours,
            base_output_directory=base_output_directory,
            nfs_mounts=nfs_mounts,
            network=network,
            reserved_ip_ranges=reserved_ip_ranges,
            psc_network_attachment=psc_network_attachment,
            enable_web_access=enable_web_access,
            enable_dashboard_access=enable_dashboard_access,
            service_account=service_account,
            labels=labels,
            batch=batch,
            fsdp=fsdp,
            deepspeed=deepspeed,
            parallelism=parallelism,
            tpu=tpu,
            model=model,
            tensorboard=tensorboard,
            experiment=experiment,
            experiment_run=experiment_run,
            job_spec_extra=job_spec_extra,
            encryption_spec=encryption_spec,
            recovery=recovery,
            priority=priority,
            framework=framework,
            hours=hours,
            steps=steps,
            step_time_s=step_time_s,
        )

        return estimate_request_request
