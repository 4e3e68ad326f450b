"""`python -m trainers.xla`: see trainers/xla/train.py."""


from trainers.xla.train import exit_now, main

exit_now(main())
