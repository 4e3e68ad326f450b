"""The framework recognizers on lines written as each framework prints them (issue 36)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from vertexplan.logparse import events
from vertexplan.logparse.entries import LogEntry
from vertexplan.logparse.frameworks import detect, registry
from vertexplan.logparse.frameworks.hf_trainer import MAX_DICT, flat_dict

TITAN = "[rank0]:[titan] 2025-06-01 10:00:00,123 - root - INFO - "
DS = "[2025-06-01 10:00:00,123] [INFO] [logging.py:128:log_dist] [Rank 0] "


def entry(text: str) -> LogEntry:
    return LogEntry(insert_id="1", timestamp=datetime(2026, 1, 1, tzinfo=UTC), severity=200,
                    job_id="42", task_name="workerpool0-0", json_payload=None,
                    text_payload=text)


def read(lines: list[str], framework: str | None = None) -> list[tuple[str, dict]]:
    job = registry.JobState(framework=framework)
    out = []
    for line in lines:
        found = registry.recognize(line, job)
        if found is not None:
            out.append((found.event, found.fields))
    return out


def test_hf_trainer_steps_eval_checkpoint_and_finish() -> None:
    lines = [
        "{'loss': 2.3101, 'grad_norm': 1.873, 'learning_rate': 4.5e-05, 'epoch': 0.1}",
        "{'loss': 2.1, 'grad_norm': 1.5, 'learning_rate': 4e-05, 'epoch': 0.2}",
        "Saving model checkpoint to /gcs/b/out/checkpoint-20",
        "{'loss': 1.9, 'grad_norm': 1.2, 'learning_rate': 3.5e-05, 'epoch': 0.3}",
        "{'eval_loss': 1.8, 'eval_runtime': 0.5, 'eval_samples_per_second': 200.0, "
        "'eval_steps_per_second': 25.0, 'epoch': 0.3}",
        "{'train_runtime': 12.5, 'train_samples_per_second': 80.0, "
        "'train_steps_per_second': 2.4, 'train_loss': 2.05, 'epoch': 0.3}",
    ]
    events = read(lines, "hf_trainer")
    assert [e for e, _ in events] == ["step", "step", "checkpoint_saved", "step", "eval",
                                      "run_finished"]
    first, second, saved, third, evaluated, finished = (f for _, f in events)
    # Before the checkpoint the interval is unknown: counted lines, marked estimated.
    assert (first["step"], first["loss"], first["lr"], first["step_estimated"]) == \
        (1, 2.3101, 4.5e-05, True)
    assert saved == {"step": 20, "path": "/gcs/b/out/checkpoint-20",
                     "recognizer": "hf_trainer@transformers-4.40-5.24"}
    # checkpoint-20 after 2 loss lines: every 7 to 10 steps; 10 is taken, still estimated.
    assert (third["step"], third["step_estimated"]) == (30, True)
    assert evaluated["step"] == 30 and evaluated["metrics"]["loss"] == 1.8
    assert (finished["step"], finished["final_loss"], finished["wall_s"]) == (30, 1.9, 12.5)
    assert all(f["recognizer"].startswith("hf_trainer@") for _, f in events)
    assert second["step"] == 2


def test_hf_trainer_interval_is_exact_once_the_checkpoints_leave_one() -> None:
    loss = "{'loss': 1.0, 'learning_rate': 1e-05, 'epoch': 0.1}"
    # logging_steps 5, save_steps 20: checkpoint-20 after 4 lines leaves (4, 5]: 5.
    events = read([loss] * 4 + ["Saving model checkpoint to /o/checkpoint-20", loss])
    assert (events[-1][1]["step"], events[-1][1]["step_estimated"]) == (25, False)
    # logging_steps 7, save_steps 20: (6.67, 10] then checkpoint-40 after 5 lines: (6.67, 8];
    # checkpoint-60 after 8 lines: (6.67, 7.5]: 7.
    saves = iter(["Saving model checkpoint to /o/checkpoint-20",
                  "Saving model checkpoint to /o/checkpoint-40",
                  "Saving model checkpoint to /o/checkpoint-60"])
    lines = [loss, loss, next(saves), loss, loss, loss, next(saves), loss, loss, loss,
             next(saves), loss]
    steps = [f for e, f in read(lines) if e == "step"]
    assert (steps[3]["step"], steps[3]["step_estimated"]) == (40, True)    # 4 x 10
    assert (steps[-1]["step"], steps[-1]["step_estimated"]) == (63, False)  # 9 x 7


def test_hf_trainer_resume_counts_from_the_resumed_step() -> None:
    events = read(["  Continuing training from global step 500",
                   "Saving model checkpoint to /out/checkpoint-600",
                   "{'loss': 1.5, 'learning_rate': 1e-05, 'epoch': 1.5}"], "hf_trainer")
    assert events[0] == ("resumed", {"step": 500,
                                     "recognizer": "hf_trainer@transformers-4.40-5.24"})
    # No loss line in the 100 steps to checkpoint-600: the interval is over 100.
    assert (events[2][1]["step"], events[2][1]["step_estimated"]) == (601, True)


def test_hf_trainer_lines_behind_torchruns_rank_prefix() -> None:
    events = read(["[default0]:{'loss': 2.0, 'learning_rate': 1e-05, 'epoch': 0.1}",
                   "[rank0]:Saving model checkpoint to /o/checkpoint-10"], "accelerate")
    assert [(e, f["step"]) for e, f in events] == [("step", 1), ("checkpoint_saved", 10)]
    # Another rank's copy of a line is not the run's.
    assert read(["[rank1]:[titan] 2025-06-01 10:00:00,123 - root - INFO - step: 20  loss:  "
                 "7.9834  memory:  1.23GiB(3.10%)  tps: 1,234  tflops: 12.34  mfu: 3.20%"]) == []


def test_hf_trainer_nan_loss_is_a_step_with_no_loss() -> None:
    # A diverged run prints nan: the step is kept and its loss is null, not the line lost.
    (kind, fields), = read(["{'loss': nan, 'grad_norm': inf, 'learning_rate': 1e-05, "
                            "'epoch': 0.5}"], "hf_trainer")
    assert kind == "step" and fields["loss"] is None and fields["grad_norm"] is None


def test_hostile_dicts_are_plain_lines() -> None:
    huge = "{'loss': 1.0, " + ", ".join(f"'k{i}': {i}" for i in range(400)) + "}"
    assert len(huge) > MAX_DICT and flat_dict(huge) is None
    hostile = [
        huge,
        "{'loss': {'inner': 1.0}, 'learning_rate': 1e-5, 'epoch': 1.0}",
        "{'loss': __import__('os').system('true'), 'learning_rate': 1, 'epoch': 1}",
        "{'loss': (1).__class__, 'learning_rate': 1, 'epoch': 1}",
        "{'loss': 1" + "0" * 500 + ", 'learning_rate': 1, 'epoch': 1}",
        "{'loss': 1e999, 'learning_rate': 1, 'epoch': 1}",
        "{'loss': True, 'learning_rate': 1, 'epoch': 1}",
        "{'loss': 'x' , 'learning_rate': 1, 'epoch': 1}",
        "{'a': " * 200 + "1" + "}" * 200,             # nested, under the length bound
        "\x1b[31m{'loss': 1.0\x1b[0m, 'learning_rate': [1], 'epoch': 1}",
    ]
    assert read(hostile) == []


def test_look_alike_prints_are_not_steps() -> None:
    lines = [
        "{'loss': 2.0}",                                   # a user's dict: no lr, no epoch
        "step: 10 loss: 2.0",                              # not torchtitan's line
        "print: step: 10  loss:  2.0  memory: lots",
        "Epoch 3: done, loss=2.0",
        "step=10 lr=0.1",                                  # no [Rank N], no skipped=
        "Saving model checkpoint to my notes",
        "The worker group has 2 attempts left",
        "Finished saving the checkpoint in 1.0 seconds.",  # torchtitan, folder never seen
    ]
    assert read(lines) == []


def test_torchtitan_step_checkpoint_and_resume_lines() -> None:
    lines = [
        TITAN + "Checkpointing active. Checkpoints will be loaded from and saved to "
                "/gcs/b/out/checkpoint",
        TITAN + "Loading the checkpoint at step 10.",
        TITAN + "\x1b[31mstep: 20  \x1b[32mloss:  7.9834  \x1b[38;2;180;60;0mgrad_norm:  "
                "1.2345  \x1b[38;2;54;234;195mmemory:  1.23GiB(3.10%)  \x1b[34mtps: 1,234  "
                "\x1b[36mtflops: 12.34  \x1b[35mmfu: 3.20%\x1b[39m",
        TITAN + "Saving the checkpoint (or staging if async is enabled).",
        TITAN + "Finished saving the checkpoint (or staging if async is enabled)in 1.53 "
                "seconds.",
        TITAN + "step:  5  loss: 10.1234  memory:  0.50GiB(1.00%)  tps: 99  mfu: 0.10%",
        TITAN + "\x1b[33mvalidate step: 20  \x1b[32mloss:  2.5000  \x1b[38;2;54;234;195m"
                "memory:  1.00GiB(2.00%)  \x1b[34mtps: 5,000\x1b[39m",
    ]
    events = read(lines, "torchtitan")
    assert [e for e, _ in events] == ["resumed", "step", "checkpoint_saved", "step", "eval"]
    assert events[0][1]["path"] == "/gcs/b/out/checkpoint/step-10"
    step = events[1][1]
    assert (step["step"], step["loss"], step["tokens_per_s"], step["grad_norm"],
            step["tflops"], step["mfu_percent"]) == (20, 7.9834, 1234.0, 1.2345, 12.34, 3.2)
    assert events[2][1]["path"] == "/gcs/b/out/checkpoint/step-20"
    assert events[2][1]["seconds"] == 1.53
    assert events[3][1]["step"] == 5 and "tflops" not in events[3][1]
    assert (events[4][1]["step"], events[4][1]["metrics"]) == (20, {"loss": 2.5})


def test_lightning_progress_and_model_checkpoint_lines() -> None:
    bar = ("Epoch 1:  45%|████▌     | 45/100 [00:05<00:06,  8.00it/s, v_num=0, "
           "val_loss=2.500, train_loss=2.310]")
    events = read(["Epoch 1:   0%|          | 0/100 [00:00<?, ?it/s, v_num=0]\r" + bar,
                   "Epoch 0, global step 100: 'val_loss' reached 2.10000 (best 2.10000), "
                   "saving model to '/gcs/b/out/epoch=0-step=100.ckpt' as top 1"],
                  "lightning")
    (kind, step), (saved_kind, saved) = events
    assert kind == "step" and step["step"] == 145 and step["step_estimated"] is True
    assert step["loss"] == 2.31 and step["step_time_s"] == 0.125
    assert saved_kind == "checkpoint_saved" and saved["step"] == 100
    assert saved["path"] == "/gcs/b/out/epoch=0-step=100.ckpt"
    assert saved["metrics"] == {"val_loss": 2.1}


def test_lightning_epoch_of_bar_updates_in_one_entry() -> None:
    # tqdm writes no newline until the epoch ends: one entry holds every update.
    updates = "".join(f"\rEpoch 0:  {b}%|█         | {b}/100 [00:01<00:09,  9.00it/s, v_num=0, "
                      f"loss={3 - b / 100:.3f}]" for b in range(1, 100))
    assert len(updates) > 5000
    (kind, step), = read([updates], "lightning")
    assert kind == "step" and step["step"] == 99 and step["loss"] == 2.01


def test_deepspeed_and_torchrun_lines() -> None:
    events = read([DS + "step=10, skipped=0, lr=[0.0001, 0.0001], mom=[(0.9, 0.999)]",
                   DS + "Saving model checkpoint: /gcs/b/out/global_step10/"
                        "mp_rank_00_model_states.pt",
                   "[2025-06-01 10:00:00,000] torch.distributed.elastic.agent.server.api: "
                   "[INFO] [default] Worker group FAILED. 2/3 attempts left; will restart "
                   "worker group"])
    assert [e for e, _ in events] == ["step", "checkpoint_saved", "replica_restarted"]
    assert (events[0][1]["step"], events[0][1]["lr"]) == (10, 0.0001)
    assert events[1][1]["step"] == 10
    assert events[2][1]["attempts_left"] == 2 and events[2][1]["recognizer"].startswith(
        "torchrun@")


def test_prefilter_rejects_ordinary_lines() -> None:
    for line in ("NCCL INFO Bootstrap : Using eth0", "Downloading shards: 100%", "",
                 "x" * 5000):
        assert not registry.may_be_framework_line(line)
    assert registry.may_be_framework_line("{'loss': 1}")
    # A framework with no recognizers (MaxText, by its command) reads nothing.
    assert not registry.may_be_framework_line("{'loss': 1}", "maxtext")


def test_detect_from_the_command_then_the_first_lines() -> None:
    assert detect.detect(["torchrun", "--nproc_per_node=8", "-m", "torchtitan.train",
                          "--job.config_file", "x.toml"], []) == "torchtitan"
    assert detect.detect(["accelerate", "launch", "train.py"], []) == "accelerate"
    assert detect.detect(["python", "-m", "MaxText.train", "base.yml"], []) == "maxtext"
    assert detect.detect(["deepspeed", "train.py", "--deepspeed", "ds.json"], []) == "deepspeed"
    assert detect.detect(["/usr/bin/lightning", "run", "model", "t.py"], []) == "lightning"
    assert detect.detect(["bash", "-c", "pip install x && torchrun train.py"], []) == "torchrun"
    # A flag's value or a path named like a framework says nothing.
    assert detect.detect(["python", "train.py", "--config", "configs/deepspeed"], []) is None
    assert detect.detect(["python", "train.py"],
                         ["GPU available: True (cuda), used: True"]) == "lightning"
    assert detect.detect(["python", "train.py"], [
        "hello", "{'loss': 2.0, 'grad_norm': 1.0, 'learning_rate': 5e-05, 'epoch': 0.01}",
    ]) == "hf_trainer"
    assert detect.detect(["python", "train.py"], ["hello", "{'loss': 2.0}"]) is None


def test_parse_reads_framework_lines_only_with_the_tasks_state() -> None:
    job = registry.JobState(framework="deepspeed")
    step = entry(DS + "step=10, skipped=0, lr=[0.001], mom=[(0.9, 0.999)]")
    assert events.plain_line(step, job) is None
    parsed = events.parse(step, job)
    assert parsed.is_step and parsed.step == 10 and not parsed.scan
    assert events.step_values(parsed)["lr"] == 0.001
    # Without a state the line is a plain line, as before.
    assert events.plain_line(step) == step.text_payload
    assert events.parse(step).event is None
    # An ordinary line keeps the fast path; a marker without a match stays plain and scanned.
    assert events.plain_line(entry("NCCL INFO ready"), job) == "NCCL INFO ready"
    odd = events.parse(entry("step=oops, out of memory"), job)
    assert odd.event is None and odd.scan


def test_a_saved_state_reads_back_and_a_tampered_one_starts_afresh() -> None:
    from fractions import Fraction

    from vertexplan.logparse.frameworks import saved
    job = registry.JobState(framework="hf_trainer")
    for line in ["{'loss': 2.3, 'learning_rate': 4e-05, 'epoch': 0.1}",
                 "Saving model checkpoint to /gcs/b/out/checkpoint-30"]:
        registry.recognize(line, job)
    back = saved.from_json(json.loads(json.dumps(saved.to_json(job))))
    assert back.framework == "hf_trainer"
    assert back.of("hf_trainer") == job.of("hf_trainer")
    assert back.of("hf_trainer").high == Fraction(30, 1)
    # Wrong kinds, unknown recognizers and fields, a zero denominator: the defaults stay.
    hostile = {"framework": "os.system", "states": {
        "hf_trainer": {"loss_lines": "1; rm -rf /", "low": {"fraction": [1, 0]},
                       "high": {"fraction": ["x", 1]}, "__class__": "evil"},
        "pickle": {"x": 1}}}
    fresh = saved.from_json(hostile)
    assert fresh.framework is None and set(fresh.states) == {"hf_trainer"}
    assert fresh.of("hf_trainer") == registry.RECOGNIZERS["hf_trainer"].new_state()
    assert saved.from_json("not a dict").states == {}


def test_deepspeed_019_lines_as_an_engine_loop_printed_them() -> None:
    """Lines as deepspeed 0.19.8 printed them in a CPU run of an engine loop here
    (steps_per_print=3, a checkpoint every 6 steps, then load_checkpoint in a second run): the
    initialize summary's step=0 reads as nothing, the engine's double load as one resume."""
    ds = "[2026-11-29 20:30:44,250] [INFO] [logging.py:123:log_dist] [Rank 0] "
    lines = [ds + "step=0, skipped=0, lr=[0.05], mom=[0]",
             ds + "step=3, skipped=0, lr=[0.05], mom=[0]",
             "[2026-11-29 20:30:44,250] [INFO] [timer.py:264:stop] epoch=0/micro_step=3/"
             "global_step=3, RunningAvgSamplesPerSec=5659.37, CurrSamplesPerSec=5655.37, "
             "MemAllocated=0.36GB, MaxMemAllocated=0.36GB",
             ds + "step=6, skipped=0, lr=[0.05], mom=[0]",
             ds + "[Torch] Checkpoint global_step6 is about to be saved!",
             ds + "Saving model checkpoint: /gcs/b/ck/global_step6/mp_rank_00_model_states.pt",
             ds + "[Torch] Begin Load checkpoint from /gcs/b/ck/global_step6/"
                  "mp_rank_00_model_states.pt...",
             ds + "[Torch] End Load checkpoint from /gcs/b/ck/global_step6/"
                  "mp_rank_00_model_states.pt...",
             ds + "[Torch] End Load checkpoint from /gcs/b/ck/global_step6/"
                  "mp_rank_00_model_states.pt..."]
    assert [(kind, f["step"]) for kind, f in read(lines, "deepspeed")] == [
        ("step", 3), ("step", 6), ("checkpoint_saved", 6), ("resumed", 6)]


def test_maxtext_lines_of_its_documented_run() -> None:
    """The lines of the run MaxText documents (AI-Hypercomputer/maxtext
    docs/guides/monitoring_and_debugging/understand_logs_and_metrics.md at 20a91e12: `python3
    -m MaxText.train src/MaxText/configs/base.yml base_output_directory=gs://runner-maxtext-logs
    run_name=demo model_name=deepseek2-16b per_device_batch_size=24 max_target_length=2048
    steps=10 dataset_type=synthetic` on a TPU v5p-8, JAX 0.7.2), checkpointing on as its
    section on output paths shows; the save line is its checkpointing code's message (no run
    of it is here: MaxText needs a TPU or GPU)."""
    lines = ["Config param steps: 10",
             "Config param checkpoint_dir: gs://runner-maxtext-logs/demo/checkpoints/",
             "Num_devices: 4, shape (1, 1, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1)",
             "completed step: 0, seconds: 44.923, TFLOP/s/device: 17.022, Tokens/s/device: "
             "1094.129, total_weights: 196608, loss: 12.038",
             "completed step: 9, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: "
             "8672.758, total_weights: 196608, loss: 10.374",
             "Started an asynchronous checkpoint save for step 9",
             "saved a checkpoint at step 9"]
    assert detect.detect(["python3", "-m", "MaxText.train", "base.yml"], []) == "maxtext"
    assert detect.detect(["python3", "-m", "maxtext.trainers.pre_train.train"], []) == "maxtext"
    events = read(lines, "maxtext")
    assert [(kind, f["step"]) for kind, f in events] == [
        ("step", 0), ("step", 9), ("checkpoint_saved", 9)]
    last = events[1][1]
    assert (last["loss"], last["step_time_s"], last["total_steps"]) == (10.374, 5.667, 10)
    assert last["tokens_per_s"] == 8672.758 * 4 and last["tflops_per_device"] == 134.924
    assert events[2][1]["path"] == "gs://runner-maxtext-logs/demo/checkpoints/9"
    # Look-alikes of a user's own prints stay lines.
    assert read(["completed step: 3 of my loop", "Config param steps: many",
                 "saved a checkpoint at step 5 (no folder known)"]) == []


def test_accelerate_save_and_load_state_lines() -> None:
    """accelerate 1.15's save_state/load_state messages, with folders named by step as its
    examples name them; a folder without a step tells nothing."""
    log = "11/29/2026 20:58:01 - INFO - accelerate.accelerator - "
    events = read([log + "Saving current state to /gcs/b/run/step_300",
                   log + "Saving current state to /gcs/b/run/epoch_2",
                   log + "Loading states from /gcs/b/run/step_300"], "accelerate")
    assert [(kind, f["step"], f["path"]) for kind, f in events] == [
        ("checkpoint_saved", 300, "/gcs/b/run/step_300"),
        ("resumed", 300, "/gcs/b/run/step_300")]
