"""The web server's application: Django under ASGI (gunicorn with uvicorn workers).

ASGI so that a job page's event stream (controlplane/logs/stream.py) is a coroutine waiting on
Redis instead of a thread held for as long as the page is open; ordinary views still run as
they are, each in a thread of its own.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Each request runs in a thread of its own: database connections come from a pool
# (config/settings.py), not kept by threads that end with their request.
os.environ.setdefault("CP_DB_POOL", "true")
application = get_asgi_application()

# Out of the cyclic collector's sight: config/heap.py.
from config import heap  # noqa: E402 - needs the application's settings loaded

heap.settle()
