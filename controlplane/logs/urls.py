"""Pages of the logs app (included by config/urls.py)."""

from django.urls import path

from controlplane.logs import views

urlpatterns = [
    path("jobs/<int:pk>/metrics.json", views.job_metrics, name="job-metrics"),
]
