from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "controlplane.runs"
    label = "runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The job page's own panels, first on the page (logs and costs add theirs in their
        # ready(), which runs after this one: INSTALLED_APPS follows the layers).
        from controlplane.runs import panels, system_metrics, tag_views, views

        panels.register("header", "runs/partials/header.html", views.header_panel)
        panels.register("notes", "runs/partials/notes.html", tag_views.notes_panel)
        panels.register("timeline", "runs/partials/timeline.html", views.timeline_panel)
        panels.register("checkpoints", "runs/partials/checkpoints.html", views.checkpoints_panel)
        panels.register("system", "runs/partials/system.html", system_metrics.panel)
