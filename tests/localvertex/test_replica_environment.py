"""What of the emulator's environment reaches a replica (localvertex/replicas/sandbox.py)."""

from __future__ import annotations

from localvertex.replicas.sandbox import replica_environment


def test_a_replica_sees_the_runtime_settings_but_not_the_hosts_secrets_or_compile_caches(
) -> None:
    host = {
        "PATH": "/usr/bin", "OMP_NUM_THREADS": "2", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "DATABASE_URL": "postgres://secret", "SECRET_KEY": "s", "USER": "root",
        # torch records these for its children once the host process has compiled anything:
        # the host user's folders, which a replica user may not write.
        "TORCHINDUCTOR_CACHE_DIR": "/tmp/torchinductor_root",
        "TRITON_CACHE_DIR": "/tmp/torchinductor_root/triton",
    }
    assert replica_environment(host) == {
        "PATH": "/usr/bin", "OMP_NUM_THREADS": "2", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
