"""A team's own PyTorch Lightning script: nothing of the product in it. A two-layer MLP over
random regression data, 12 steps of 4 batches an epoch (3 epochs), the loss on TQDM's progress
bar (Rich's, Lightning's default where rich is installed, draws only its end without a
terminal), a validation every epoch, a checkpoint every 6 steps by ModelCheckpoint(verbose=True)
into the folder Vertex names (AIP_CHECKPOINT_DIR); `--ckpt_path <file>` resumes, as
LightningCLI's fit does. Run by tests/integration/test_own_framework.py as a CustomJob."""

import argparse
import os

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint, TQDMProgressBar

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt_path", default=None)
given = parser.parse_args()
L.seed_everything(0)


class Regression(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                       torch.nn.Linear(16, 1))

    def training_step(self, batch, _):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, _):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def loader(n):
    g = torch.Generator().manual_seed(n)
    x = torch.randn(n, 8, generator=g)
    data = torch.utils.data.TensorDataset(x, x.sum(dim=1, keepdim=True))
    return torch.utils.data.DataLoader(data, batch_size=8)


checkpoints = ModelCheckpoint(dirpath=os.environ["AIP_CHECKPOINT_DIR"], monitor="train_loss",
                              every_n_train_steps=6, save_top_k=-1, verbose=True)
trainer = L.Trainer(max_steps=12, accelerator="cpu", devices=1, log_every_n_steps=3,
                    callbacks=[checkpoints, TQDMProgressBar()], logger=False,
                    enable_model_summary=False)
trainer.fit(Regression(), loader(32), loader(16), ckpt_path=given.ckpt_path)
