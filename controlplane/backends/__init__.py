"""Backends: the only code that talks to Google (training, logging, serving, billing,
monitoring), behind the ports in base.py and serving_base.py."""
