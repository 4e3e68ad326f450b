"""PersistentResources through the preview SDK (`aiplatform.preview.persistent_resource`, which
speaks google.cloud.aiplatform.v1beta1), driven only through `google.cloud.aiplatform`
(tests/localvertex/sdk.py): create waits on its operation and reads the resource back RUNNING,
list and delete work, and a field only v1beta1 has is refused by name rather than dropped
(the emulator answers v1beta1 with its v1 implementation: localvertex/core/api_versions.py)."""

from __future__ import annotations

import contextlib

import pytest
from google.api_core import exceptions
from google.cloud.aiplatform.preview import persistent_resource
from google.cloud.aiplatform_v1beta1 import MachineSpec, PersistentResource, ResourcePool

from tests.localvertex.helpers import EmulatorProcess
from tests.localvertex.sdk import sdk_channel


@pytest.fixture
def sdk(monkeypatch: pytest.MonkeyPatch, emulator: EmulatorProcess):
    with sdk_channel(monkeypatch, emulator):
        yield
        # Whatever a test left is deleted: other tests list the shared emulator's resources.
        for resource in persistent_resource.PersistentResource.list():
            with contextlib.suppress(exceptions.NotFound):
                resource.delete()


def test_create_list_and_delete_through_the_preview_sdk(sdk: None) -> None:
    pool = ResourcePool(machine_spec=MachineSpec(machine_type="n1-standard-4"), replica_count=2)
    resource = persistent_resource.PersistentResource.create(
        persistent_resource_id="sdk-preview-pool", display_name="preview pool",
        resource_pools=[pool], labels={"team": "a"})

    # The preview class reads the resource back through v1 and creates it through v1beta1.
    assert resource.state == PersistentResource.State.RUNNING.value
    assert resource.resource_name.endswith("/persistentResources/sdk-preview-pool")
    assert resource.labels == {"team": "a"}
    [read_pool] = resource.gca_resource.resource_pools
    assert (read_pool.machine_spec.machine_type, read_pool.replica_count) == ("n1-standard-4", 2)
    listed = [r.resource_name for r in persistent_resource.PersistentResource.list()]
    assert resource.resource_name in listed

    # The preview class deletes through v1; its v1beta1 client (as vertex_ray uses it) deletes
    # too, and the operation it polls names v1beta1 types.
    beta = resource.api_client.select_version("v1beta1")
    got = beta.get_persistent_resource(name=resource.resource_name)
    assert type(got).__module__.startswith("google.cloud.aiplatform_v1beta1")
    assert got.state == PersistentResource.State.RUNNING
    beta.delete_persistent_resource(name=resource.resource_name).result(timeout=60)
    listed = [r.resource_name for r in persistent_resource.PersistentResource.list()]
    assert resource.resource_name not in listed


def test_a_field_only_v1beta1_has_is_refused_by_name(sdk: None) -> None:
    pool = ResourcePool(
        machine_spec=MachineSpec(machine_type="a3-highgpu-8g", multihost_gpu_node_count=2),
        replica_count=1)
    with pytest.raises(exceptions.InvalidArgument,
                       match=r"persistent_resource\.resource_pools\[0\]\.machine_spec\."
                             r"multihost_gpu_node_count: only in v1beta1"):
        persistent_resource.PersistentResource.create(
            persistent_resource_id="sdk-preview-refused", resource_pools=[pool])
