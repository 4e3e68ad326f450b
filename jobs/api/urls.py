from django.urls import path

from jobs.api import views

urlpatterns = [
    path("jobs/", views.JobList.as_view(), name="api-job-list"),
    path("jobs/<int:pk>/", views.JobDetail.as_view(), name="api-job-detail"),
    path("jobs/<int:pk>/cancel/", views.JobCancel.as_view(), name="api-job-cancel"),
    path("jobs/<int:pk>/events/", views.JobEvents.as_view(), name="api-job-events"),
    path("jobs/<int:pk>/steps/", views.JobSteps.as_view(), name="api-job-steps"),
    path("jobs/<int:pk>/logs/", views.JobLogs.as_view(), name="api-job-logs"),
]
