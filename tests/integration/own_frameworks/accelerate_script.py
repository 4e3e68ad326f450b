"""A team's own Accelerate training loop: nothing of the product in it, in the shape of
transformers' examples/pytorch/*_no_trainer.py scripts. A two-layer MLP over random regression
data, 12 steps of 8 samples, a tqdm bar over the run's steps (the examples'
`tqdm(range(max_train_steps))`) with the loss as its postfix, the Accelerator's state logged
at the start as the examples log it, an evaluation every 6 steps
logged as "epoch N: perplexity: P eval_loss: L" through accelerate.logging, and
`accelerator.save_state` into `step_<N>` folders of the folder Vertex names
(AIP_CHECKPOINT_DIR); `--resume_from_checkpoint <folder>` resumes by `load_state` and skips the
steps done, as the examples do. Logging and the bar on stdout (Vertex marks a line on stderr an
ERROR). Run by tests/integration/test_own_framework.py as a CustomJob's `python -c` program."""

import argparse
import logging
import math
import os
import sys

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from tqdm.auto import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--resume_from_checkpoint", default=None)
given = parser.parse_args()
logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                    datefmt="%m/%d/%Y %H:%M:%S", level=logging.INFO, stream=sys.stdout)
logger = get_logger(__name__)
torch.manual_seed(0)
STEPS = 12

accelerator = Accelerator(cpu=True)
logger.info(accelerator.state, main_process_only=False)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
model, optimizer = accelerator.prepare(model, optimizer)
generator = torch.Generator().manual_seed(1)
batches = [torch.randn(8, 8, generator=generator) for _ in range(STEPS)]
held_out = torch.randn(16, 8, generator=generator)

completed_steps = 0
if given.resume_from_checkpoint:
    accelerator.print(f"Resumed from checkpoint: {given.resume_from_checkpoint}")
    accelerator.load_state(given.resume_from_checkpoint)
    completed_steps = int(os.path.basename(given.resume_from_checkpoint.rstrip("/"))
                          .replace("step_", ""))
progress_bar = tqdm(range(STEPS), disable=not accelerator.is_local_main_process,
                    file=sys.stdout)
progress_bar.update(completed_steps)
for x in batches[completed_steps:]:
    loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    progress_bar.update(1)
    completed_steps += 1
    progress_bar.set_postfix(loss=loss.item())
    if completed_steps % 6 == 0:
        with torch.no_grad():
            eval_loss = torch.nn.functional.mse_loss(model(held_out),
                                                     held_out.sum(dim=1, keepdim=True))
        logger.info(f"epoch {completed_steps // 6 - 1}: perplexity: "
                    f"{math.exp(min(eval_loss.item(), 50)):.4f} eval_loss: {eval_loss.item():.4f}")
        accelerator.save_state(os.path.join(os.environ["AIP_CHECKPOINT_DIR"],
                                            f"step_{completed_steps}"))
progress_bar.close()
