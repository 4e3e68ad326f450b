"""Pages of the logs app (included by config/urls.py)."""

from django.urls import path

from controlplane.logs import stream, views

urlpatterns = [
    path("jobs/<int:pk>/metrics.json", views.job_metrics, name="job-metrics"),
    path("jobs/<int:pk>/events/", stream.job_events, name="job-events"),
]
