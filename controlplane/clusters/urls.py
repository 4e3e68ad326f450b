"""Cluster pages, under /clusters/ (config/urls.py includes this module)."""

from django.urls import path

from controlplane.clusters import views

urlpatterns = [
    path("", views.index, name="clusters-index"),
    path("new/", views.create, name="clusters-create"),
    path("<int:pk>/", views.detail, name="clusters-detail"),
    path("<int:pk>/delete/", views.delete, name="clusters-delete"),
    path("<int:pk>/ray-jobs/", views.submit_ray_job, name="clusters-ray-job-submit"),
]
