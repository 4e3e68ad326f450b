"""The project's urls plus the Slack channel pages, until jobs/urls.py includes them."""

from django.urls import include, path

urlpatterns = [
    path("", include("jobs.notifications.urls")),
    path("", include("controlplane.urls")),
]
