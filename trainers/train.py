"""`python -m trainers.train`: the PyTorch trainer (trainers/torch/main.py has the launch
commands, the strategies and the flags). Jobs stored by the control plane run this command, and
torchrun starts each process with it: it stays here."""

from trainers.cli import exit_now
from trainers.torch.main import main

if __name__ == "__main__":
    exit_now(main())
