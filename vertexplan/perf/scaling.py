"""How much of each added node's throughput multi-node data-parallel training keeps: an
assumption per machine series, stated wherever it is used (the recommender's durations, the
expected step time). Pure."""

from __future__ import annotations

from fractions import Fraction

# How much of each added node's throughput data-parallel training keeps, by the network
# between the nodes: efficiency(n) = 1 / (1 + penalty x (n - 1)). A first approximation of
# published scaling curves (GPUDirect-TCPXO on A3 Mega/A3 Ultra/A4 scales best, A3 High's
# TCPX next, A2's 100 Gbps and N1/G2's 32-100 Gbps VM networks least; TPU slices talk over ICI
# within a slice). Stated with every recommendation as an assumption, not a measurement.
SCALING_PENALTY: dict[str, Fraction] = {
    "a4-highgpu": Fraction(3, 100),
    "a3-ultragpu": Fraction(3, 100),
    "a3-megagpu": Fraction(4, 100),
    "a3-highgpu": Fraction(8, 100),
    "a2-ultragpu": Fraction(12, 100),
    "a2-highgpu": Fraction(12, 100),
    "a2-megagpu": Fraction(12, 100),
}
DEFAULT_SCALING_PENALTY = Fraction(25, 100)  # N1, G2: the ordinary VM network
TPU_SCALING_PENALTY = Fraction(1, 100)  # VMs of one slice, joined by ICI


def scaling_efficiency(series: str, nodes: int, *, tpu: bool = False) -> Fraction:
    """The fraction of ``nodes`` x one node's throughput a job keeps (1 on one node)."""
    if nodes <= 1:
        return Fraction(1)
    penalty = TPU_SCALING_PENALTY if tpu else SCALING_PENALTY.get(series,
                                                                  DEFAULT_SCALING_PENALTY)
    return 1 / (1 + penalty * (nodes - 1))
