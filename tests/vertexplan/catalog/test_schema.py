"""The message tree the field rule checks against is aiplatform_v1's CustomJob, field for field:
a field Google adds shows up here first."""

from __future__ import annotations

from google.cloud.aiplatform_v1.types import CustomJob

from vertexplan.catalog import schema

OPAQUE = ("google.protobuf.", "google.rpc.")  # Durations, Timestamps, Status: scalars here


def walk(descriptor, name: str, seen: set[str]) -> None:
    if descriptor.full_name in seen:
        return
    seen.add(descriptor.full_name)
    assert name in schema.MESSAGES, name
    mine = schema.MESSAGES[name]
    assert set(mine) == {f.json_name for f in descriptor.fields}, name
    for f in descriptor.fields:
        kind = mine[f.json_name]
        message = f.message_type
        if message is None or message.GetOptions().map_entry:
            assert kind in (schema.SCALAR, schema.MAP), (name, f.json_name)
        elif message.full_name.startswith(OPAQUE):
            assert kind == schema.SCALAR or kind == "Status", (name, f.json_name)
        else:
            expected = (schema.LIST_OF if f.is_repeated else "") + message.name
            assert kind == expected, (name, f.json_name)
            walk(message, message.name, seen)


def test_the_tree_is_aiplatform_v1s_custom_job() -> None:
    walk(CustomJob.pb().DESCRIPTOR, "CustomJob", set())


def test_snake_case_names_are_known_as_vertex_knows_them() -> None:
    assert schema.field_kind("WorkerPoolSpec", "machine_spec") == "MachineSpec"
    assert schema.field_kind("WorkerPoolSpec", "use_spot") is None
