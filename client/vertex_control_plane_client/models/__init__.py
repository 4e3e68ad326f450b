"""Contains all the data models used in inputs/outputs"""

from .access_enum import AccessEnum
from .alert import Alert
from .alert_kind_enum import AlertKindEnum
from .attempt import Attempt
from .attempt_detail import AttemptDetail
from .audit_entry import AuditEntry
from .autoscaling_metric_enum import AutoscalingMetricEnum
from .batch_request import BatchRequest
from .blank_enum import BlankEnum
from .budget_request import BudgetRequest
from .category import Category
from .cause_enum import CauseEnum
from .channel import Channel
from .channel_kind_enum import ChannelKindEnum
from .channel_request import ChannelRequest
from .cluster import Cluster
from .clusters_ray_jobs_logs_retrieve_response_200 import (
    ClustersRayJobsLogsRetrieveResponse200,
)
from .clusters_ray_jobs_logs_retrieve_response_200_lines_item import (
    ClustersRayJobsLogsRetrieveResponse200LinesItem,
)
from .clusters_ray_jobs_logs_retrieve_severity_type_0 import (
    ClustersRayJobsLogsRetrieveSeverityType0,
)
from .create_cluster_request import CreateClusterRequest
from .create_cluster_request_labels import CreateClusterRequestLabels
from .create_cluster_request_pools_item import CreateClusterRequestPoolsItem
from .create_cluster_request_ray_type_0 import CreateClusterRequestRayType0
from .create_endpoint_request import CreateEndpointRequest
from .custom_job_request import CustomJobRequest
from .custom_job_request_job_spec import CustomJobRequestJobSpec
from .custom_job_request_labels import CustomJobRequestLabels
from .custom_job_spec_request import CustomJobSpecRequest
from .custom_job_spec_request_worker_pool_specs_item import (
    CustomJobSpecRequestWorkerPoolSpecsItem,
)
from .deep_speed_request import DeepSpeedRequest
from .deep_speed_request_extra import DeepSpeedRequestExtra
from .deep_speed_request_fp_16 import DeepSpeedRequestFp16
from .deep_speed_request_optimizer import DeepSpeedRequestOptimizer
from .deep_speed_request_scheduler import DeepSpeedRequestScheduler
from .deep_speed_request_zero import DeepSpeedRequestZero
from .delivery_enum import DeliveryEnum
from .deploy_request import DeployRequest
from .deployment import Deployment
from .detail import Detail
from .endpoint import Endpoint
from .endpoint_deployments_item import EndpointDeploymentsItem
from .endpoint_slo_type_0 import EndpointSloType0
from .estimate_custom_job_request import EstimateCustomJobRequest
from .estimate_custom_job_request_job_spec import EstimateCustomJobRequestJobSpec
from .estimate_custom_job_request_labels import EstimateCustomJobRequestLabels
from .estimate_request_request import EstimateRequestRequest
from .estimate_request_request_encryption_spec import (
    EstimateRequestRequestEncryptionSpec,
)
from .estimate_request_request_env import EstimateRequestRequestEnv
from .estimate_request_request_job_spec_extra import EstimateRequestRequestJobSpecExtra
from .estimate_request_request_labels import EstimateRequestRequestLabels
from .event import Event
from .field_errors import FieldErrors
from .format_enum import FormatEnum
from .fsdp_request import FsdpRequest
from .group_job import GroupJob
from .health_enum import HealthEnum
from .idle_resource import IdleResource
from .import_text_request import ImportTextRequest
from .imported import Imported
from .imported_errors import ImportedErrors
from .imported_request import ImportedRequest
from .job import Job
from .job_check import JobCheck
from .job_check_custom_job_type_0 import JobCheckCustomJobType0
from .job_check_deepspeed_config_type_0 import JobCheckDeepspeedConfigType0
from .job_check_errors import JobCheckErrors
from .job_check_estimate_type_0 import JobCheckEstimateType0
from .job_check_memory_plan_type_0 import JobCheckMemoryPlanType0
from .job_check_queue_type_0 import JobCheckQueueType0
from .job_check_quota_type_0 import JobCheckQuotaType0
from .job_check_request import JobCheckRequest
from .job_check_suggestions import JobCheckSuggestions
from .job_check_warnings import JobCheckWarnings
from .job_checkpoints_item import JobCheckpointsItem
from .job_clone_body import JobCloneBody
from .job_cost_type_0 import JobCostType0
from .job_diagnosis_type_0 import JobDiagnosisType0
from .job_goodput import JobGoodput
from .job_group import JobGroup
from .job_group_states import JobGroupStates
from .job_groups import JobGroups
from .job_kind_enum import JobKindEnum
from .job_line import JobLine
from .job_links import JobLinks
from .job_list import JobList
from .job_list_diagnosis_type_0 import JobListDiagnosisType0
from .job_origin_type_0 import JobOriginType0
from .job_request_request import JobRequestRequest
from .job_request_request_encryption_spec import JobRequestRequestEncryptionSpec
from .job_request_request_env import JobRequestRequestEnv
from .job_request_request_job_spec_extra import JobRequestRequestJobSpecExtra
from .job_request_request_labels import JobRequestRequestLabels
from .job_strategy_enum import JobStrategyEnum
from .job_system import JobSystem
from .job_tracking import JobTracking
from .jobs_estimate_create_response_200 import JobsEstimateCreateResponse200
from .jobs_export_create_fmt import JobsExportCreateFmt
from .jobs_export_create_response_200 import JobsExportCreateResponse200
from .jobs_export_retrieve_fmt import JobsExportRetrieveFmt
from .jobs_export_retrieve_response_200 import JobsExportRetrieveResponse200
from .jobs_groups_retrieve_kind import JobsGroupsRetrieveKind
from .jobs_groups_retrieve_state import JobsGroupsRetrieveState
from .jobs_list_kind import JobsListKind
from .jobs_list_state import JobsListState
from .jobs_logs_list_order import JobsLogsListOrder
from .jobs_logs_list_severity_type_0 import JobsLogsListSeverityType0
from .jobs_metrics_retrieve_name_item import JobsMetricsRetrieveNameItem
from .jobs_metrics_retrieve_response_200 import JobsMetricsRetrieveResponse200
from .jobs_recommend_create_response_200 import JobsRecommendCreateResponse200
from .jobs_recommend_create_response_400 import JobsRecommendCreateResponse400
from .log_line import LogLine
from .member import Member
from .member_request import MemberRequest
from .mode_enum import ModeEnum
from .model_entry import ModelEntry
from .model_request import ModelRequest
from .model_request_activation_checkpointing_type_0 import (
    ModelRequestActivationCheckpointingType0,
)
from .new_token import NewToken
from .nfs_mount_request import NfsMountRequest
from .notify_on_enum import NotifyOnEnum
from .on_exceed_enum import OnExceedEnum
from .open_ai_chat_completion_request import OpenAIChatCompletionRequest
from .open_ai_chat_completion_request_messages_item import (
    OpenAIChatCompletionRequestMessagesItem,
)
from .open_ai_completion_request import OpenAICompletionRequest
from .open_ai_error import OpenAIError
from .open_ai_error_object import OpenAIErrorObject
from .open_ai_model_list import OpenAIModelList
from .open_ai_model_list_data_item import OpenAIModelListDataItem
from .paginated_alert_list import PaginatedAlertList
from .paginated_attempt_detail_list import PaginatedAttemptDetailList
from .paginated_audit_entry_list import PaginatedAuditEntryList
from .paginated_channel_list import PaginatedChannelList
from .paginated_cluster_list import PaginatedClusterList
from .paginated_endpoint_list import PaginatedEndpointList
from .paginated_event_list import PaginatedEventList
from .paginated_job_list_list import PaginatedJobListList
from .paginated_log_line_list import PaginatedLogLineList
from .paginated_member_list import PaginatedMemberList
from .paginated_model_entry_list import PaginatedModelEntryList
from .paginated_ray_job_list import PaginatedRayJobList
from .paginated_restart_list import PaginatedRestartList
from .paginated_sample_list import PaginatedSampleList
from .paginated_step_list import PaginatedStepList
from .paginated_sweep_list_list import PaginatedSweepListList
from .paginated_team_list import PaginatedTeamList
from .paginated_template_list import PaginatedTemplateList
from .paginated_token_list import PaginatedTokenList
from .parallelism_request import ParallelismRequest
from .patched_autoscaling_request import PatchedAutoscalingRequest
from .patched_channel_request import PatchedChannelRequest
from .patched_job_notes_request import PatchedJobNotesRequest
from .patched_job_notes_request_add_tags import PatchedJobNotesRequestAddTags
from .patched_job_notes_request_tags import PatchedJobNotesRequestTags
from .patched_policy_request import PatchedPolicyRequest
from .patched_probe_settings_request import PatchedProbeSettingsRequest
from .patched_replicas_request import PatchedReplicasRequest
from .patched_replicas_request_replicas import PatchedReplicasRequestReplicas
from .patched_role_request import PatchedRoleRequest
from .patched_tracking_request import PatchedTrackingRequest
from .picker_image import PickerImage
from .pipeline_schedule_enum import PipelineScheduleEnum
from .policy import Policy
from .pool_request import PoolRequest
from .pool_request_env import PoolRequestEnv
from .precision_enum import PrecisionEnum
from .predict_request import PredictRequest
from .preset import Preset
from .preset_request import PresetRequest
from .preset_scaled_down import PresetScaledDown
from .python_package_request import PythonPackageRequest
from .queue_entry import QueueEntry
from .ray_job import RayJob
from .recommend_request_request import RecommendRequestRequest
from .recommend_request_request_activation_checkpointing_type_0 import (
    RecommendRequestRequestActivationCheckpointingType0,
)
from .recommend_request_strategy_enum import RecommendRequestStrategyEnum
from .recovery_request import RecoveryRequest
from .recovery_strategy_enum import RecoveryStrategyEnum
from .reference_device_enum import ReferenceDeviceEnum
from .register_model_request import RegisterModelRequest
from .replica_system import ReplicaSystem
from .reservation_request import ReservationRequest
from .restart import Restart
from .resubmit_request import ResubmitRequest
from .role_enum import RoleEnum
from .runtime_enum import RuntimeEnum
from .runtime_trial import RuntimeTrial
from .sample import Sample
from .scheduling_strategy_enum import SchedulingStrategyEnum
from .serving_endpoints_latency_retrieve_response_200 import (
    ServingEndpointsLatencyRetrieveResponse200,
)
from .serving_endpoints_openai_v1_chat_completions_create_response_200 import (
    ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200,
)
from .serving_endpoints_openai_v1_completions_create_response_200 import (
    ServingEndpointsOpenaiV1CompletionsCreateResponse200,
)
from .serving_endpoints_predict_create_response_200 import (
    ServingEndpointsPredictCreateResponse200,
)
from .serving_images import ServingImages
from .serving_jobs_retrieve_response_200 import ServingJobsRetrieveResponse200
from .sharding_enum import ShardingEnum
from .slo import Slo
from .slo_request import SloRequest
from .source_enum import SourceEnum
from .start_trial_request import StartTrialRequest
from .state_enum import StateEnum
from .status_enum import StatusEnum
from .step import Step
from .submit_ray_job_request import SubmitRayJobRequest
from .submit_ray_job_request_env_vars import SubmitRayJobRequestEnvVars
from .sweep import Sweep
from .sweep_links import SweepLinks
from .sweep_list import SweepList
from .sweep_state_enum import SweepStateEnum
from .sweep_trials_item import SweepTrialsItem
from .sweeps_clone_retrieve_response_200 import SweepsCloneRetrieveResponse200
from .sweeps_create_body import SweepsCreateBody
from .sweeps_export_retrieve_fmt import SweepsExportRetrieveFmt
from .sweeps_export_retrieve_response_200 import SweepsExportRetrieveResponse200
from .sweeps_import_create_body import SweepsImportCreateBody
from .sweeps_import_create_response_200 import SweepsImportCreateResponse200
from .sweeps_validate_create_body import SweepsValidateCreateBody
from .sweeps_validate_create_response_200 import SweepsValidateCreateResponse200
from .system_sample import SystemSample
from .team import Team
from .team_goodput import TeamGoodput
from .teams_audit_list_action import TeamsAuditListAction
from .teams_budget_retrieve_response_200 import TeamsBudgetRetrieveResponse200
from .teams_budget_update_response_200 import TeamsBudgetUpdateResponse200
from .teams_quotas_retrieve_response_200 import TeamsQuotasRetrieveResponse200
from .teams_quotas_update_body import TeamsQuotasUpdateBody
from .teams_quotas_update_response_200 import TeamsQuotasUpdateResponse200
from .teams_spend_retrieve_response_200 import TeamsSpendRetrieveResponse200
from .template import Template
from .template_request import TemplateRequest
from .token import Token
from .token_request import TokenRequest
from .tpu_request import TpuRequest
from .tracking import Tracking
from .type_enum import TypeEnum

__all__ = (
    "AccessEnum",
    "Alert",
    "AlertKindEnum",
    "Attempt",
    "AttemptDetail",
    "AuditEntry",
    "AutoscalingMetricEnum",
    "BatchRequest",
    "BlankEnum",
    "BudgetRequest",
    "Category",
    "CauseEnum",
    "Channel",
    "ChannelKindEnum",
    "ChannelRequest",
    "Cluster",
    "ClustersRayJobsLogsRetrieveResponse200",
    "ClustersRayJobsLogsRetrieveResponse200LinesItem",
    "ClustersRayJobsLogsRetrieveSeverityType0",
    "CreateClusterRequest",
    "CreateClusterRequestLabels",
    "CreateClusterRequestPoolsItem",
    "CreateClusterRequestRayType0",
    "CreateEndpointRequest",
    "CustomJobRequest",
    "CustomJobRequestJobSpec",
    "CustomJobRequestLabels",
    "CustomJobSpecRequest",
    "CustomJobSpecRequestWorkerPoolSpecsItem",
    "DeepSpeedRequest",
    "DeepSpeedRequestExtra",
    "DeepSpeedRequestFp16",
    "DeepSpeedRequestOptimizer",
    "DeepSpeedRequestScheduler",
    "DeepSpeedRequestZero",
    "DeliveryEnum",
    "Deployment",
    "DeployRequest",
    "Detail",
    "Endpoint",
    "EndpointDeploymentsItem",
    "EndpointSloType0",
    "EstimateCustomJobRequest",
    "EstimateCustomJobRequestJobSpec",
    "EstimateCustomJobRequestLabels",
    "EstimateRequestRequest",
    "EstimateRequestRequestEncryptionSpec",
    "EstimateRequestRequestEnv",
    "EstimateRequestRequestJobSpecExtra",
    "EstimateRequestRequestLabels",
    "Event",
    "FieldErrors",
    "FormatEnum",
    "FsdpRequest",
    "GroupJob",
    "HealthEnum",
    "IdleResource",
    "Imported",
    "ImportedErrors",
    "ImportedRequest",
    "ImportTextRequest",
    "Job",
    "JobCheck",
    "JobCheckCustomJobType0",
    "JobCheckDeepspeedConfigType0",
    "JobCheckErrors",
    "JobCheckEstimateType0",
    "JobCheckMemoryPlanType0",
    "JobCheckpointsItem",
    "JobCheckQueueType0",
    "JobCheckQuotaType0",
    "JobCheckRequest",
    "JobCheckSuggestions",
    "JobCheckWarnings",
    "JobCloneBody",
    "JobCostType0",
    "JobDiagnosisType0",
    "JobGoodput",
    "JobGroup",
    "JobGroups",
    "JobGroupStates",
    "JobKindEnum",
    "JobLine",
    "JobLinks",
    "JobList",
    "JobListDiagnosisType0",
    "JobOriginType0",
    "JobRequestRequest",
    "JobRequestRequestEncryptionSpec",
    "JobRequestRequestEnv",
    "JobRequestRequestJobSpecExtra",
    "JobRequestRequestLabels",
    "JobsEstimateCreateResponse200",
    "JobsExportCreateFmt",
    "JobsExportCreateResponse200",
    "JobsExportRetrieveFmt",
    "JobsExportRetrieveResponse200",
    "JobsGroupsRetrieveKind",
    "JobsGroupsRetrieveState",
    "JobsListKind",
    "JobsListState",
    "JobsLogsListOrder",
    "JobsLogsListSeverityType0",
    "JobsMetricsRetrieveNameItem",
    "JobsMetricsRetrieveResponse200",
    "JobsRecommendCreateResponse200",
    "JobsRecommendCreateResponse400",
    "JobStrategyEnum",
    "JobSystem",
    "JobTracking",
    "LogLine",
    "Member",
    "MemberRequest",
    "ModeEnum",
    "ModelEntry",
    "ModelRequest",
    "ModelRequestActivationCheckpointingType0",
    "NewToken",
    "NfsMountRequest",
    "NotifyOnEnum",
    "OnExceedEnum",
    "OpenAIChatCompletionRequest",
    "OpenAIChatCompletionRequestMessagesItem",
    "OpenAICompletionRequest",
    "OpenAIError",
    "OpenAIErrorObject",
    "OpenAIModelList",
    "OpenAIModelListDataItem",
    "PaginatedAlertList",
    "PaginatedAttemptDetailList",
    "PaginatedAuditEntryList",
    "PaginatedChannelList",
    "PaginatedClusterList",
    "PaginatedEndpointList",
    "PaginatedEventList",
    "PaginatedJobListList",
    "PaginatedLogLineList",
    "PaginatedMemberList",
    "PaginatedModelEntryList",
    "PaginatedRayJobList",
    "PaginatedRestartList",
    "PaginatedSampleList",
    "PaginatedStepList",
    "PaginatedSweepListList",
    "PaginatedTeamList",
    "PaginatedTemplateList",
    "PaginatedTokenList",
    "ParallelismRequest",
    "PatchedAutoscalingRequest",
    "PatchedChannelRequest",
    "PatchedJobNotesRequest",
    "PatchedJobNotesRequestAddTags",
    "PatchedJobNotesRequestTags",
    "PatchedPolicyRequest",
    "PatchedProbeSettingsRequest",
    "PatchedReplicasRequest",
    "PatchedReplicasRequestReplicas",
    "PatchedRoleRequest",
    "PatchedTrackingRequest",
    "PickerImage",
    "PipelineScheduleEnum",
    "Policy",
    "PoolRequest",
    "PoolRequestEnv",
    "PrecisionEnum",
    "PredictRequest",
    "Preset",
    "PresetRequest",
    "PresetScaledDown",
    "PythonPackageRequest",
    "QueueEntry",
    "RayJob",
    "RecommendRequestRequest",
    "RecommendRequestRequestActivationCheckpointingType0",
    "RecommendRequestStrategyEnum",
    "RecoveryRequest",
    "RecoveryStrategyEnum",
    "ReferenceDeviceEnum",
    "RegisterModelRequest",
    "ReplicaSystem",
    "ReservationRequest",
    "Restart",
    "ResubmitRequest",
    "RoleEnum",
    "RuntimeEnum",
    "RuntimeTrial",
    "Sample",
    "SchedulingStrategyEnum",
    "ServingEndpointsLatencyRetrieveResponse200",
    "ServingEndpointsOpenaiV1ChatCompletionsCreateResponse200",
    "ServingEndpointsOpenaiV1CompletionsCreateResponse200",
    "ServingEndpointsPredictCreateResponse200",
    "ServingImages",
    "ServingJobsRetrieveResponse200",
    "ShardingEnum",
    "Slo",
    "SloRequest",
    "SourceEnum",
    "StartTrialRequest",
    "StateEnum",
    "StatusEnum",
    "Step",
    "SubmitRayJobRequest",
    "SubmitRayJobRequestEnvVars",
    "Sweep",
    "SweepLinks",
    "SweepList",
    "SweepsCloneRetrieveResponse200",
    "SweepsCreateBody",
    "SweepsExportRetrieveFmt",
    "SweepsExportRetrieveResponse200",
    "SweepsImportCreateBody",
    "SweepsImportCreateResponse200",
    "SweepStateEnum",
    "SweepsValidateCreateBody",
    "SweepsValidateCreateResponse200",
    "SweepTrialsItem",
    "SystemSample",
    "Team",
    "TeamGoodput",
    "TeamsAuditListAction",
    "TeamsBudgetRetrieveResponse200",
    "TeamsBudgetUpdateResponse200",
    "TeamsQuotasRetrieveResponse200",
    "TeamsQuotasUpdateBody",
    "TeamsQuotasUpdateResponse200",
    "TeamsSpendRetrieveResponse200",
    "Template",
    "TemplateRequest",
    "Token",
    "TokenRequest",
    "TpuRequest",
    "Tracking",
    "TypeEnum",
)
