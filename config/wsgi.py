import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Out of the cyclic collector's sight: config/heap.py.
from config import heap  # noqa: E402 - needs the application's settings loaded

heap.settle()
