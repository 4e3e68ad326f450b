"""The tensor memory meter: live storage bytes op by op, the peak, and the limit."""

from __future__ import annotations

import pytest
import torch

from trainers.torch.memory_meter import MIB, MemoryLimitExceeded, TensorMemoryMeter


def test_the_peak_is_the_most_bytes_alive_at_once_and_views_count_once() -> None:
    with TensorMemoryMeter() as meter:
        a = torch.zeros(1024, 256)  # 1 MiB
        view = a[:10]  # the same storage
        b = torch.ones(512, 256)  # 0.5 MiB
        assert meter.current_bytes == MIB + MIB // 2
        del a, view, b
        c = torch.zeros(256, 256)  # 0.25 MiB: the others are gone
        assert meter.current_bytes == MIB // 4
    assert meter.peak_bytes == MIB + MIB // 2
    del c


def test_a_storage_shrunk_in_place_counts_at_its_new_size() -> None:
    """FSDP frees a gathered layer by resizing its storage to 0, the tensor object kept."""
    with TensorMemoryMeter() as meter:
        gathered = torch.zeros(1024, 256)
        gathered.untyped_storage().resize_(0)
        torch.zeros(1)  # the next operator sees the storage at its new size
        assert meter.current_bytes == 4
    assert meter.peak_bytes == MIB


def test_backward_and_the_optimizer_are_measured() -> None:
    model = torch.nn.Linear(512, 512, bias=False)  # 1 MiB of weights, made before the meter
    with TensorMemoryMeter() as meter:
        model(torch.randn(4, 512)).sum().backward()
        torch.zeros(1)  # the meter sums after each operator: the backward's temporaries gone
        assert MIB <= meter.current_bytes < 1.1 * MIB  # the gradient, and the small input
        optimizer = torch.optim.Adam(model.parameters(), foreach=False)
        optimizer.step()
        torch.zeros(1)
        # The gradient and Adam's two moments, the step's temporaries freed.
        assert 3 * MIB <= meter.current_bytes < 3.1 * MIB
    assert meter.peak_bytes >= 3 * MIB
    del optimizer


def test_past_its_limit_a_rank_fails_naming_the_limit() -> None:
    meter = TensorMemoryMeter(limit_bytes=2 * MIB, rank=3)
    refused = pytest.raises(MemoryLimitExceeded,
                            match=r"rank 3 held 3\.0 MiB .* limit of 2\.0 MiB")
    with refused, meter:
        kept = torch.zeros(1024, 256)
        torch.zeros(2048, 256)
    del kept
    assert not torch.utils._python_dispatch._get_current_dispatch_mode()
