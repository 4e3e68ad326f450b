"""The PyTorch trainer on an XLA device (PyTorch/XLA, PJRT): `python -m trainers.xla`.

Runs in its own environment (requirements-tpu-xla.txt, Dockerfile.tpu-xla; `make xla-env` for
the CPU build): torch_xla pins the torch it was built against, which is not the project's.
"""
