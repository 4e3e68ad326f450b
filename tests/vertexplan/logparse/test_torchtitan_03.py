"""torchtitan 0.3.0's lines, as its source formats them (issue 36).

Not produced by running it: torchtitan 0.3.0 (PyPI, with torch 2.13.0+cpu, in a scratch
environment, 2026-11-29) cannot train on a CPU. Its documented run (`MODULE=llama3
CONFIG=llama3_debugmodel ./run_train.sh`, i.e. `torchrun --nproc_per_node=1 -m torchtitan.train
--module llama3 --config llama3_debugmodel`, here with 6 steps, checkpoints and validation on,
its repository's tests/assets tokenizer and a c4_test data file made for it) first fails at
import: torchtitan.distributed.minimal_async_ep.kernels imports `triton`, which a
CPU build of torch does not bring. With triton 3.9.0 installed it fails in Trainer.__init__:
tools/utils.get_device_info() falls back to device type "cuda" when no accelerator is found
(`_get_available_device_type() or "cuda"`), and `torch.cuda.set_device` raises AttributeError
(module 'torch._C' has no attribute '_cuda_setDevice'). Past that, its metrics read the
device's memory (DeviceMemoryMonitor: get_device_properties, memory_stats) and its barrier
passes device_ids: there is no CPU path. So the lines below are written as
components/metrics.py (MetricsProcessor.log, log_validation) and components/checkpointer/dcp.py
of the 0.3.0 wheel format them, with the logger's prefix torchtitan's init_logger sets and
torchrun's rank prefix (--local-ranks-filter 0 --role rank --tee 3, as run_train.sh runs it).
"""

from __future__ import annotations

from vertexplan.logparse.frameworks import registry

TITAN = "[rank0]:[titan] 2026-11-29 23:18:06,376 - root - INFO - "
RED, GREEN, ORANGE, TURQUOISE, BLUE, CYAN, MAGENTA, YELLOW, RESET = (
    "\x1b[31m", "\x1b[32m", "\x1b[38;2;180;60;0m", "\x1b[38;2;54;234;195m", "\x1b[34m",
    "\x1b[36m", "\x1b[35m", "\x1b[33m", "\x1b[39m")


def step_line(step: int, loss: float, mfu: str) -> str:
    # MetricsProcessor.log's f-string (0.3.0, components/metrics.py).
    return (f"{RED}step: {step:2}  {GREEN}loss: {loss:8.5f}  {ORANGE}grad_norm: {1.2345:7.4f}  "
            f"{TURQUOISE}memory: {0.5:5.2f}GiB({1.0:.2f}%)  {BLUE}tps: {round(12345.6):,}  "
            f"{CYAN}tflops: {0.42:,.2f}  {MAGENTA}mfu: {mfu}{RESET}")


def read(lines: list[str]) -> list[tuple[str, dict]]:
    job = registry.JobState(framework="torchtitan")
    found = [registry.recognize(line, job) for line in lines]
    return [(f.event, f.fields) for f in found if f is not None]


def test_torchtitan_03_steps_checkpoints_and_resume() -> None:
    folder = "/gcs/b/out/checkpoint"
    lines = [TITAN + "torchtitan version: 0.3.0 (0.0.0 means __version__ is not defined "
                     "correctly).",
             TITAN + f"Checkpointing active. Checkpoints will be loaded from and saved to {folder}",
             TITAN + f"Loading the checkpoint from {folder}/step-5.",
             TITAN + "Finished loading the checkpoint in 0.12 seconds.",
             TITAN + step_line(6, 7.98341, "N/A"),       # a device of unknown peak FLOP/s
             TITAN + step_line(10, 7.5, "3.20%"),
             TITAN + "Saving the checkpoint.",
             TITAN + "Finished saving the checkpoint in 1.53 seconds.",
             TITAN + f"{YELLOW}validate step: 10  {GREEN}loss:  2.5000  {TURQUOISE}memory:  "
                     f"0.50GiB(1.00%)  {BLUE}tps: 5,000{RESET}",
             TITAN + "Staging the checkpoint.",
             TITAN + "Finished staging the checkpoint in 0.20 seconds."]
    events = read(lines)
    assert [(kind, f["step"]) for kind, f in events] == [
        ("resumed", 5), ("step", 6), ("step", 10), ("checkpoint_saved", 10), ("eval", 10),
        ("checkpoint_saved", 10)]
    assert events[0][1]["path"] == f"{folder}/step-5"
    first = events[1][1]
    assert (first["loss"], first["tokens_per_s"], first["tflops"]) == (7.98341, 12346.0, 0.42)
    assert "mfu_percent" not in first and events[2][1]["mfu_percent"] == 3.2
    assert events[3][1]["path"] == f"{folder}/step-10"
    assert events[1][1]["recognizer"] == "torchtitan@torchtitan-0.1-0.3"


def test_look_alikes_of_03s_lines_stay_lines() -> None:
    assert read(["Loading the checkpoint from my_model.pt.",
                 TITAN + "Loading the checkpoint from /gcs/b/out/latest.",
                 "step: 10  loss: 2.0  mfu: N/A",
                 "Finished staging the data in 2.00 seconds."]) == []
