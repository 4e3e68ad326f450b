"""The PyTorch trainer on an XLA device (PyTorch/XLA, PJRT): `python -m trainers.xla`. Only
what is XLA's lives here: the SPMD mesh (mesh.py), the strategy that places the model and the
batches on it (strategy.py), and how one process per host meets the others (trainer.py).

Runs in its own environment (requirements-tpu-xla.txt, Dockerfile.tpu-xla; `make xla-env` for
the CPU build): torch_xla pins the torch it was built against, which is not the project's.
"""
