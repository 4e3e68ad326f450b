"""Training and serving entrypoints that Vertex AI jobs run, a room per framework.

The commands stored jobs run are the modules at this level, and stay here:
`python -m trainers.train` (PyTorch), `python -m trainers.jax`, `python -m trainers.xla`
(PyTorch/XLA), `python -m trainers.ray_train`, `python -m trainers.serve` and
`python -m trainers.serving.<tool>`. What every trainer shares is here too: the loop of a run
(loop.py), its command line (cli.py) and configuration (config.py), the corpus (corpus.py),
the checkpoints' folder protocol (checkpoint.py) on local or gs:// storage (storage.py), the
events the control plane reads (events.py), and what the job around the process provides
(job/). The rooms: torch/ (the PyTorch trainer and its strategies), jax/, xla/ (the PyTorch
trainer on an XLA device) and serving/.

Never imports Django or the control plane: these modules run inside the training image.
"""
