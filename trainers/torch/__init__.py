"""The PyTorch trainer (`python -m trainers.train`): one loop (trainer.py) for every strategy
(strategies/: ddp, fsdp, DeepSpeed ZeRO, tensor x pipeline x data parallel), the model it
trains (model.py), its configuration (config.py) and command line (main.py), and how its
processes start and meet (distributed.py). The PyTorch/XLA trainer (trainers/xla/) is this
trainer on an XLA device.
"""
