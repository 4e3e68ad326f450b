"""The control plane's Django apps, one per domain (see README "Layout")."""
