"""The JAX trainer (`python -m trainers.jax`): the byte-level GPT of trainers/torch/model.py in Flax
and Optax, sharded over a (data, fsdp, tensor) `jax.sharding.Mesh`, with the PyTorch trainer's
data, events and checkpoint layout (Orbax inside). For TPU slices; runs on CPU with several
host devices in tests. Never imports torch: a TPU image needs only the `jax` extra.
"""
