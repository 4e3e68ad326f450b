"""Pages of the runs app: the job list and the job page (included by config/urls.py)."""

from django.urls import path

from controlplane.runs import queue_views, tag_views, views

urlpatterns = [
    path("", views.JobListView.as_view(), name="job-list"),
    path("jobs/rows/", views.JobRowsView.as_view(), name="job-list-rows"),
    path("jobs/compare/", views.job_compare, name="job-compare"),
    path("docs/own-code/", views.own_code, name="own-code"),
    path("queue/", queue_views.queue_page, name="queue"),
    path("jobs/<int:pk>/", views.JobDetailView.as_view(), name="job-detail"),
    path("jobs/<int:pk>/cancel/", views.job_cancel, name="job-cancel"),
    path("jobs/<int:pk>/tags/", tag_views.job_tags, name="job-tags"),
    path("jobs/<int:pk>/partials/<slug:name>/", views.job_partial, name="job-partial"),
]
