"""Checkpoints on an object store (no atomic rename): written straight into `step-N/`, committed
by the marker written last, rotated, and restored, through the storage abstraction (fsspec's
memory:// stands in for gs://; Orbax's files are staged on local disk and copied)."""

from __future__ import annotations

import json

import pytest

from trainers.checkpoint import latest
from trainers.storage import storage_for

pytestmark = pytest.mark.trainers


def test_orbax_checkpoints_commit_rotate_and_restore_on_an_object_store():
    import jax
    import jax.numpy as jnp
    import numpy as np

    from trainers.jax.checkpoint import TRAINER_FILE, JaxCheckpoints, read_json, read_state

    root = "memory://jax-object-store/ckpt"
    checkpoints = JaxCheckpoints(root, keep=1, token="t0")
    assert not checkpoints.storage.atomic_rename
    states = {step: {"w": jnp.full((3, 4), float(step)), "b": jnp.arange(4.0) * step}
              for step in (1, 2)}
    infos = [checkpoints.save(step, states[step], {"step": step}, {"steps": 2}, {"format": "orbax"})
             for step in (1, 2)]
    assert infos[1].pruned == (infos[0].path,)
    storage = storage_for(root)
    assert storage.list_dir(root) == ["step-00000002"]
    found = latest(storage, root)
    assert found is not None and found.step == 2 and found.metadata["format"] == "orbax"
    assert json.loads(storage.read_bytes(storage.join(found.path, "COMMITTED")))["step"] == 2
    assert read_json(found.path, TRAINER_FILE) == {"step": 2}

    target = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding),
                          states[2])
    restored = read_state(found.path, target)
    for name, value in states[2].items():
        np.testing.assert_array_equal(np.asarray(restored[name]), np.asarray(value))
