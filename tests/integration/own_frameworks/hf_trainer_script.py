"""A team's own training script, as a team writes one with Hugging Face's Trainer: nothing of
the product in it. A two-layer Llama of a few thousand parameters, 12 steps on random tokens,
a loss line every 3 steps, an evaluation and a checkpoint every 6, into the folder Vertex
names (AIP_CHECKPOINT_DIR); `--resume_from_checkpoint <folder>` resumes, as the example
scripts of transformers do. Run by tests/integration/test_own_framework.py as a CustomJob's
`python -c` program."""

import argparse
import os

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--resume_from_checkpoint", default=None)
given = parser.parse_args()

torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(
    vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
    num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64))


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ids = torch.randint(0, 64, (16,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": ids, "labels": ids}


args = TrainingArguments(
    output_dir=os.environ["AIP_CHECKPOINT_DIR"], max_steps=12, per_device_train_batch_size=4,
    logging_steps=3, save_steps=6, eval_strategy="steps", eval_steps=6, report_to=[],
    log_level="info", use_cpu=True, dataloader_num_workers=0)
Trainer(model=model, args=args, train_dataset=Tokens(), eval_dataset=Tokens()).train(
    resume_from_checkpoint=given.resume_from_checkpoint)
