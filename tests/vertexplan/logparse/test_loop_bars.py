"""A team's own Accelerate or DeepSpeed loop read from what it prints by convention (issue 36):
its tqdm bar over the run's steps with the loss as postfix, its "epoch N: ..." evaluations
(vertexplan/logparse/frameworks/loop_bar.py). The bars are drawn by tqdm itself (4.70, into a
file as a replica's pipe takes them), in both orders a loop may redraw them."""

from __future__ import annotations

import io

import pytest
from tqdm import tqdm

from vertexplan.logparse.frameworks import loop_bar, registry

LOSSES = [4.51, 4.12, 3.87, 3.87, 3.5, 3.21]


def bar_output(postfix_first: bool, losses: list[float] = LOSSES, start: int = 0) -> str:
    """What a loop's bar writes: one redraw per update and per postfix (mininterval 0: every
    update redraws, as a slow step does), then its close."""
    out = io.StringIO()
    bar = tqdm(range(len(losses) + start), file=out, mininterval=0, ascii=False)
    bar.update(start)
    for loss in losses:
        if postfix_first:
            bar.set_postfix(loss=loss)
            bar.update(1)
        else:
            bar.update(1)
            bar.set_postfix(loss=loss)
    bar.close()
    return out.getvalue()


def read(text: str, framework: str | None, job: registry.JobState | None = None
         ) -> list[tuple[str, dict]]:
    job = job or registry.JobState(framework=framework)
    found = []
    for line in text.replace("\n", "\r").split("\r"):
        for state in loop_bar.split_bar(line):
            event = registry.recognize(state, job)
            if event is not None:
                found.append((event.event, event.fields))
    return found


@pytest.mark.parametrize("postfix_first", [False, True])
@pytest.mark.parametrize("framework", ["accelerate", "deepspeed"])
def test_a_loops_bar_is_its_steps_loss_and_total(postfix_first: bool, framework: str) -> None:
    events = read(bar_output(postfix_first), framework)
    steps = [f for kind, f in events if kind == "step"]
    # Step 4 shows the same rounded loss as step 3: where the count moves first, nothing
    # tells step 4's loss apart, and it is read no earlier than step 5, whose loss differs.
    expected = [(1, 4.51), (2, 4.12), (3, 3.87), (4, 3.87), (5, 3.5), (6, 3.21)]
    if not postfix_first:
        expected.remove((4, 3.87))
    assert [(f["step"], f["loss"]) for f in steps] == expected
    assert all(f["total_steps"] == 6 and f["recognizer"].startswith(framework + "@")
               for f in steps)
    assert events[-1] == ("run_finished", {"step": 6, "final_loss": 3.21,
                                            "recognizer": steps[0]["recognizer"]})


def test_the_bar_resumed_from_a_checkpoint_counts_on_from_it() -> None:
    log = "11/29/2026 20:58:01 - INFO - accelerate.accelerator - "
    job = registry.JobState(framework="accelerate")
    assert read(log + "Loading states from /gcs/b/run/step_6", "accelerate", job)[0][0] == \
        "resumed"
    events = read(bar_output(False, [3.0, 2.9], start=6), "accelerate", job)
    assert [(kind, f["step"]) for kind, f in events] == [
        ("step", 7), ("step", 8), ("run_finished", 8)]


def test_a_logged_evaluation_and_a_line_printed_into_the_bar() -> None:
    """The loop's logger writes into the bar's line (tqdm leaves it without a newline): the bar's
    last state and the evaluation are both read."""
    bar = bar_output(False, [4.5, 4.1])
    last = bar.rstrip("\n").rsplit("\r", 1)[-1]
    line = last + "11/29/2026 20:58:03 - INFO - __main__ - [RANK 0] epoch 0: perplexity: " \
                  "60.3 eval_loss: 4.1"
    assert loop_bar.split_bar(line) == [last.rstrip(), line[len(last):]]
    events = read(bar.rstrip("\n").rsplit("\r", 1)[0] + "\r" + line, "accelerate")
    assert events[-1] == ("eval", {"step": 2, "epoch": 0, "metrics": {
        "perplexity": 60.3, "loss": 4.1}, "recognizer": events[0][1]["recognizer"]})
    # run_glue_no_trainer's form: the metric's dict; logging's default prefix.
    assert read("INFO:__main__:epoch 1: {'accuracy': 0.81, 'f1': 0.77}", "accelerate") == [
        ("eval", {"step": 0, "epoch": 1, "metrics": {"accuracy": 0.81, "f1": 0.77},
                  "recognizer": events[0][1]["recognizer"]})]


def test_deepspeeds_step_lines_give_the_bars_steps_their_lr_and_no_step_twice() -> None:
    ds = "[2026-11-29 20:30:44,250] [INFO] [logging.py:123:log_dist] [Rank 0] "
    redraws = [part for part in bar_output(False, [4.0, 3.0, 2.0]).split("\r") if part.strip()]
    # The engine logs step S in engine.step(), before the loop redraws its bar at S.
    lines = [*redraws[:4], ds + "step=2, skipped=0, lr=[0.05], mom=[0]", *redraws[4:]]
    events = read("\r".join(lines), "deepspeed")
    steps = [f for kind, f in events if kind == "step"]
    assert [(f["step"], f.get("lr")) for f in steps] == [(1, None), (2, 0.05), (3, None)]
    # Without a bar, the engine's lines are the steps.
    assert [f["step"] for _, f in read(ds + "step=3, skipped=0, lr=[0.05], mom=[0]",
                                       "deepspeed")] == [3]


def test_a_bar_in_a_job_not_known_to_run_a_loop_framework_is_no_step() -> None:
    """Another program's bar (a download, a tokenizer's map), an HF Trainer's, a Lightning
    job's: a loss-bearing bar is read only in a job known to run Accelerate or DeepSpeed."""
    text = bar_output(False)
    for framework in (None, "hf_trainer", "lightning", "torchtitan", "torchrun"):
        assert [kind for kind, _ in read(text, framework)] == [], framework
    # Under Accelerate, DeepSpeed's recognizer (also asked) leaves its bar to Accelerate's.
    assert {f["recognizer"].split("@")[0] for _, f in read(text, "accelerate")} == {
        "accelerate"}


def test_look_alike_prints_are_not_steps() -> None:
    lines = [
        # Bars that are no training loop's: no loss in the postfix, a validation's loss.
        "Downloading: 100%|██████████| 10/10 [00:01<00:00,  9.50it/s]",
        "Running tokenizer on dataset:  50%|█████     | 500/1000 [00:01<00:01, 400.00ex/s]",
        " 50%|█████     | 6/12 [00:01<00:01,  5.00it/s, val_loss=3.2]",
        " 50%|█████     | 6/12 [00:01<00:01,  5.00it/s, eval_loss=3.2]",
        # A count past its total, a bar of a hostile postfix.
        " 50%|█████     | 13/12 [00:01<00:01,  5.00it/s, loss=3.2]",
        " 50%|█████     | 6/12 [00:01<00:01,  5.00it/s, loss=__import__('os')]",
        # A user's own prints of epochs and progress.
        "epoch 3: starting",
        "epoch 1: 45 batches done",
        "epoch 2: loss: low",
        "epoch 2: {'loss': __import__('os').system('x')}",
        "my epoch 2: loss: 3.0",
        "step 6/12 loss=3.2",
        "50% done | 6/12 [fast, loss=3.2]",
    ]
    for framework in ("accelerate", "deepspeed"):
        assert read("\n".join(lines), framework) == [], framework


def test_an_accelerate_loop_is_told_by_the_state_it_logs_first() -> None:
    """transformers' *_no_trainer.py examples log `accelerator.state` first (accelerate 1.15:
    behind accelerate.logging's "[RANK 0] "); a DeepSpeed engine its version line."""
    from vertexplan.logparse.frameworks import detect
    assert detect.from_lines(["11/29/2026 23:42:43 - INFO - __main__ - [RANK 0] Distributed "
                              "environment: DistributedType.NO"]) == "accelerate"
    assert detect.from_lines(["[2026-11-29 23:25:24,557] [INFO] [logging.py:123:log_dist] "
                              "[Rank -1] DeepSpeed info: version=0.19.8, git-hash=unknown, "
                              "git-branch=unknown"]) == "deepspeed"
    # A bar alone tells nothing: it could be any program's.
    assert detect.from_lines(bar_output(False).split("\r")) is None
