"""`python -m trainers.jax`: see trainers/jax/train.py."""

import sys

from trainers.jax.train import main

sys.exit(main())
