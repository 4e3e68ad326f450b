"""`python -m trainers.xla`: see trainers/xla/train.py."""

from trainers.cli import exit_now
from trainers.xla.train import main

exit_now(main())
