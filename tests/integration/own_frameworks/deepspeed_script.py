"""A team's own DeepSpeed engine loop: nothing of the product in it. A two-layer MLP over random
regression data, 12 steps of 8 samples through `deepspeed.initialize`, the loop's progress on a
tqdm bar over the run's steps with the loss as its postfix (as PyTorch loops show it), an
evaluation every 6 steps printed as "epoch N: eval_loss: X" (the shape of transformers'
*_no_trainer examples), the engine's own lines at INFO (its step line every 3 steps and its
checkpoint lines), a checkpoint every 6 steps by `save_checkpoint` into the folder Vertex names
(AIP_CHECKPOINT_DIR); `--resume_from_checkpoint <folder>/global_step<N>` resumes there by
`load_checkpoint`. Run by tests/integration/test_own_framework.py as a CustomJob's `python -c`
program, one process (the engine's world of one; gloo on the CPU). Everything on stdout, as
the engine's own logger writes (Vertex marks a line on stderr an ERROR)."""

import argparse
import logging
import os
import sys

import deepspeed
import torch
from tqdm.auto import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--resume_from_checkpoint", default=None)
given = parser.parse_args()
logging.basicConfig(level=logging.INFO, stream=sys.stdout)
deepspeed.utils.logging.set_log_level_from_string("info")
torch.manual_seed(0)
STEPS = 12

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
engine, _, _, _ = deepspeed.initialize(
    model=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.05),
    config={"train_batch_size": 8, "steps_per_print": 3})
generator = torch.Generator().manual_seed(1)
data = [torch.randn(8, 8, generator=generator) for _ in range(STEPS)]
held_out = torch.randn(16, 8, generator=generator)

done = 0
if given.resume_from_checkpoint:
    folder = given.resume_from_checkpoint.rstrip("/")
    engine.load_checkpoint(os.path.dirname(folder), tag=os.path.basename(folder))
    done = engine.global_steps
bar = tqdm(range(STEPS), file=sys.stdout)
bar.update(done)
for x in data[done:]:
    loss = torch.nn.functional.mse_loss(engine(x), x.sum(dim=1, keepdim=True))
    engine.backward(loss)
    engine.step()
    bar.update(1)
    bar.set_postfix(loss=loss.item())
    if engine.global_steps % 6 == 0:
        with torch.no_grad():
            held = torch.nn.functional.mse_loss(engine(held_out), held_out.sum(1, keepdim=True))
        logging.info("epoch %d: eval_loss: %.4f", engine.global_steps // 6 - 1, held.item())
        engine.save_checkpoint(os.environ["AIP_CHECKPOINT_DIR"])
bar.close()
