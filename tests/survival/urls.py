"""The project's urls plus the Slack channel pages, until controlplane/runs/urls.py includes them."""

from django.urls import include, path

urlpatterns = [
    path("", include("controlplane.notifications.urls")),
    path("", include("config.urls")),
]
