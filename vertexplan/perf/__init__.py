"""Training performance against the hardware: peak FLOP/s per accelerator, model FLOPs per
token and Model FLOPs Utilisation (MFU). Pure: no Django, no database."""

from vertexplan.perf.flops import ModelShape, flops_per_token, shape_from_event
from vertexplan.perf.mfu import Devices, MfuBasis, job_devices, mfu_basis
from vertexplan.perf.peaks import PRECISIONS, Peak, PeakFlops, peak_flops, peak_table

__all__ = [
    "PRECISIONS",
    "Devices",
    "MfuBasis",
    "ModelShape",
    "Peak",
    "PeakFlops",
    "flops_per_token",
    "job_devices",
    "mfu_basis",
    "peak_flops",
    "peak_table",
    "shape_from_event",
]
