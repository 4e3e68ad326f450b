"""The pages (the REST API has its own urls under api/v1/)."""

from django.urls import path

from jobs import views

urlpatterns = [
    path("", views.JobListView.as_view(), name="job-list"),
    path("jobs/rows/", views.JobRowsView.as_view(), name="job-list-rows"),
    path("jobs/new/", views.JobComposeView.as_view(), name="job-compose"),
    path("jobs/validate/", views.JobValidateView.as_view(), name="job-validate"),
    path("jobs/<int:pk>/", views.JobDetailView.as_view(), name="job-detail"),
    path("jobs/<int:pk>/cancel/", views.job_cancel, name="job-cancel"),
    path("jobs/<int:pk>/metrics.json", views.job_metrics, name="job-metrics"),
    path("jobs/<int:pk>/partials/<slug:name>/", views.job_partial, name="job-partial"),
]
