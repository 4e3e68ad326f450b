"""Hyperparameter sweeps (Vertex HyperparameterTuningJobs): the study, the tuning job with its
trial job composed like any job, export and import, and the sweep's cost."""

from vertexplan.sweeps.cost import SweepEstimate, estimate
from vertexplan.sweeps.interop import FORMATS, ImportedSweep, export, import_text
from vertexplan.sweeps.study import ALGORITHMS, GOALS, PARAMETER_TYPES, SCALE_TYPES
from vertexplan.sweeps.tuning_job import SweepComposition, compose_sweep

__all__ = [
    "ALGORITHMS",
    "FORMATS",
    "GOALS",
    "PARAMETER_TYPES",
    "SCALE_TYPES",
    "ImportedSweep",
    "SweepComposition",
    "SweepEstimate",
    "compose_sweep",
    "estimate",
    "export",
    "import_text",
]
