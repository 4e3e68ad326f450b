from django.urls import path

from controlplane.sweeps import views

urlpatterns = [
    path("", views.sweep_list, name="sweep-list"),
    path("new/", views.sweep_new, name="sweep-new"),
    path("<int:pk>/", views.sweep_detail, name="sweep-detail"),
    path("<int:pk>/cancel/", views.sweep_cancel, name="sweep-cancel"),
]
