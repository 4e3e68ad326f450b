"""Pages for a team's Slack channels; included from controlplane/runs/urls.py."""

from django.urls import path

from controlplane.notifications import views

urlpatterns = [
    path("teams/<slug:team>/notifications/", views.channel_list, name="notification-channels"),
    path("teams/<slug:team>/notifications/<int:pk>/", views.channel_edit,
         name="notification-channel-edit"),
    path("teams/<slug:team>/notifications/<int:pk>/delete/", views.channel_delete,
         name="notification-channel-delete"),
]
