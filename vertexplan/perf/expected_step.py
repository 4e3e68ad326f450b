"""How long a training step is expected to take before any step has run: the step's FLOPs over
the FLOP/s the job's devices are expected to reach.

    seconds = tokens_per_step x FLOPs_per_token / (devices x peak x utilisation x scaling)
              / (1 - pipeline bubble)

- tokens_per_step: the global batch (sequences a step) x the sequence length.
- FLOPs per token (as flops.py counts them, PaLM appendix B): 2N forward; backward 2N for the
  activations' gradients and 2N for the weights' gradients, of the trainable parameters only
  (a frozen base under adapters takes no weight gradients); 12 L d T for attention; what
  activation checkpointing recomputes counted again (the hardware does it): full, the whole
  forward (2N + 4 L d T); selective, the attention scores and their product with the values
  (4 L d T).
- peak: the dense figure of the device at the training precision (peaks.py, with its source).
- utilisation: ASSUMED_UTILISATION of the peak, a round figure below what well-tuned large
  runs publish (PaLM 540B: 46.2% MFU on TPU v4, Chowdhery et al. 2022, table 3; Megatron-LM
  at 1T parameters: 52% of A100 peak, Narayanan et al. 2021), since a team's first run is
  rarely tuned that well.
- scaling: the share of each added node's throughput the network keeps
  (scaling.py: an assumption per machine series).
- the pipeline bubble, the share of a step pipeline ranks wait (memory.Layout).

It is a model, never a measurement: estimates label it so and prefer a step time measured on
the same job shape. Pure: no Django, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from vertexplan import memory
from vertexplan.perf.peaks import peak_flops
from vertexplan.perf.scaling import scaling_efficiency

ASSUMED_UTILISATION = Fraction(40, 100)
# What the step's FLOPs include beyond the model's own work, by activation checkpointing mode.
RECOMPUTED = {
    "selective": "the attention recomputed in backward included",
    "full": "every block's forward recomputed in backward included",
}


@dataclass(frozen=True)
class ExpectedStep:
    seconds: Fraction
    tokens_per_step: int
    flops_per_step: int  # all devices together, recomputation included
    devices: int
    accelerator: str
    peak_tflops: float  # one device's, at the precision used
    precision: str
    peak_source: str
    utilisation: Fraction
    scaling: Fraction
    bubble: float
    checkpointing: str = "none"  # the model's activation checkpointing: what is recomputed

    def explain(self) -> str:
        """One line: the figures the step time was modelled from."""
        parts = [f"{self.flops_per_step / 1e12:,.1f} TFLOP a step ({self.tokens_per_step:,} "
                 f"tokens) on {self.devices} x {self.accelerator} at {self.peak_tflops:g} "
                 f"TFLOP/s {self.precision} ({self.peak_source}) x {float(self.utilisation):.0%}"
                 " assumed utilisation"]
        if self.checkpointing in RECOMPUTED:
            parts[0] = parts[0].replace(" a step (", f" a step ({RECOMPUTED[self.checkpointing]}, ")
        if self.scaling < 1:
            parts.append(f"x {float(self.scaling):.0%} multi-node scaling (assumed)")
        if self.bubble:
            parts.append(f"/ (1 - {self.bubble:.0%} pipeline bubble)")
        return "modelled, not measured: " + " ".join(parts)


def hardware_flops_per_token(model: memory.ModelShape) -> int:
    """One training token's FLOPs as the hardware runs them: flops.py's model FLOPs (6N +
    12 L d T) less the weight gradients a frozen base skips, plus the recomputed forward.
    Apart from flops.flops_per_token because the memory plan's shape may not name heads."""
    trainable = model.trainable_parameters or model.parameters
    dense = 4 * model.parameters + 2 * trainable  # forward, activation and weight gradients
    attention = 0
    if model.layers and model.hidden_size and model.sequence_length:
        attention = 12 * model.layers * model.hidden_size * model.sequence_length
    return dense + attention + recomputed_flops_per_token(model, attention)


def recomputed_flops_per_token(model: memory.ModelShape, attention: int) -> int:
    """What activation checkpointing runs again per token: the forward of every block
    (full) or of the attention core alone (selective); `attention` is 12 L d T."""
    if model.activation_checkpointing == "full":
        return 2 * model.parameters + attention // 3  # the forward again
    if model.activation_checkpointing == "selective":
        return attention // 3  # Q K^T and the scores times V, forward again
    return 0


def expected_step(model: memory.ModelShape, layout: memory.Layout, *, global_batch: int,
                  accelerator: str | None, machine_type: str,
                  tpu: bool = False) -> ExpectedStep | str:
    """The modelled step time of this job, or why it cannot be modelled."""
    if not model.sequence_length:
        return "no sequence length: give model.sequence_length for an expected step time"
    if global_batch < 1:
        return "no global batch size"
    if not accelerator:
        return "a CPU job: no accelerator peak to model its step time from"
    peak = peak_flops(accelerator, model.dtype)
    if isinstance(peak, str):
        return peak
    devices = max(layout.world_size, 1)
    tokens = global_batch * model.sequence_length
    flops = tokens * hardware_flops_per_token(model)
    scaling = scaling_efficiency(machine_type.rsplit("-", 1)[0], layout.nodes, tpu=tpu)
    reached = Fraction(peak.flops) * devices * ASSUMED_UTILISATION * scaling
    bubble = layout.pipeline_bubble
    seconds = Fraction(flops) / reached / (1 - Fraction(bubble).limit_denominator(10**6))
    return ExpectedStep(seconds=seconds, tokens_per_step=tokens, flops_per_step=flops,
                        devices=devices, accelerator=accelerator,
                        peak_tflops=peak.flops / 1e12, precision=peak.precision,
                        peak_source=peak.source, utilisation=ASSUMED_UTILISATION,
                        scaling=scaling, bubble=bubble,
                        checkpointing=model.activation_checkpointing)
