"""The protobuf classes of aiplatform.v1's EndpointService and ModelService messages.

The gRPC handlers decode and encode raw protobuf, so each proto-plus type is taken as the
protobuf class behind it (`.pb()`).
"""

from __future__ import annotations

from google.cloud import aiplatform_v1

_pb = lambda t: t.pb()  # noqa: E731 - the protobuf class behind a proto-plus type
CreateEndpointRequest = _pb(aiplatform_v1.CreateEndpointRequest)
GetEndpointRequest = _pb(aiplatform_v1.GetEndpointRequest)
ListEndpointsRequest = _pb(aiplatform_v1.ListEndpointsRequest)
ListEndpointsResponse = _pb(aiplatform_v1.ListEndpointsResponse)
DeleteEndpointRequest = _pb(aiplatform_v1.DeleteEndpointRequest)
DeployModelRequest = _pb(aiplatform_v1.DeployModelRequest)
DeployModelResponse = _pb(aiplatform_v1.DeployModelResponse)
UndeployModelRequest = _pb(aiplatform_v1.UndeployModelRequest)
UndeployModelResponse = _pb(aiplatform_v1.UndeployModelResponse)
MutateDeployedModelRequest = _pb(aiplatform_v1.MutateDeployedModelRequest)
MutateDeployedModelResponse = _pb(aiplatform_v1.MutateDeployedModelResponse)
CreateEndpointOperationMetadata = _pb(aiplatform_v1.CreateEndpointOperationMetadata)
DeployModelOperationMetadata = _pb(aiplatform_v1.DeployModelOperationMetadata)
UndeployModelOperationMetadata = _pb(aiplatform_v1.UndeployModelOperationMetadata)
MutateDeployedModelOperationMetadata = _pb(aiplatform_v1.MutateDeployedModelOperationMetadata)
DeleteOperationMetadata = _pb(aiplatform_v1.DeleteOperationMetadata)
UploadModelRequest = _pb(aiplatform_v1.UploadModelRequest)
UploadModelResponse = _pb(aiplatform_v1.UploadModelResponse)
UploadModelOperationMetadata = _pb(aiplatform_v1.UploadModelOperationMetadata)
GetModelRequest = _pb(aiplatform_v1.GetModelRequest)
ListModelsRequest = _pb(aiplatform_v1.ListModelsRequest)
ListModelsResponse = _pb(aiplatform_v1.ListModelsResponse)
DeleteModelRequest = _pb(aiplatform_v1.DeleteModelRequest)
DeployedModelPb = _pb(aiplatform_v1.DeployedModel)
