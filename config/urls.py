"""The site's URLs: each app's pages and its REST API (config/api_urls.py)."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from controlplane.core.health import healthz
from controlplane.security import login

urlpatterns = [
    path("healthz/", healthz, name="healthz"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("admin/", admin.site.urls),
    path("login/", login.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", include("config.api_urls")),
    path("api/v1/", include("controlplane.security.api")),
    path("", include("controlplane.security.urls")),
    path("", include("controlplane.runs.urls")),
    path("", include("controlplane.logs.urls")),
    path("", include("controlplane.costs.urls")),
    path("serving/", include("controlplane.serving.urls")),
    path("", include("controlplane.notifications.urls")),
    path("", include("controlplane.compose.urls")),
]
