"""The site's URLs: each app's pages and its REST API (config/api_urls.py)."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from controlplane.core.api_fallback import unknown_route
from controlplane.core.api_schema import DocsView, SchemaView
from controlplane.core.health import healthz
from controlplane.security import login

urlpatterns = [
    path("healthz/", healthz, name="healthz"),
    # Generated once per process; for signed-in callers unless CP_API_SCHEMA_PUBLIC.
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up script as a file: no inline script, as the
    # Content-Security-Policy requires.
    path("api/docs/", DocsView.as_view(
        url_name="api-schema", template_name="core/swagger_ui.html"),
         name="api-docs"),
    # Before the admin's own: its login is the site's, with the same failure limits.
    path("admin/login/", login.AdminLoginView.as_view(), name="admin-login"),
    path("admin/", admin.site.urls),
    path("login/", login.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", include("config.api_urls")),
    path("api/v1/", include("controlplane.security.api")),
    # Last of the API: any other path under /api/ (a malformed id included) is a JSON 404.
    re_path(r"^api/(?P<rest>[\s\S]*/)$", unknown_route, name="api-not-found"),
    path("", include("controlplane.security.urls")),
    path("", include("controlplane.runs.urls")),
    path("", include("controlplane.logs.urls")),
    path("", include("controlplane.costs.urls")),
    path("serving/", include("controlplane.serving.urls")),
    path("sweeps/", include("controlplane.sweeps.urls")),
    path("clusters/", include("controlplane.clusters.urls")),
    path("", include("controlplane.notifications.urls")),
    path("", include("controlplane.compose.urls")),
]
