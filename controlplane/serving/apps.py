from django.apps import AppConfig


class ServingConfig(AppConfig):
    name = "controlplane.serving"
    label = "serving"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The job page's serving panel: registered here because runs may not import serving.
        from controlplane.runs import panels
        from controlplane.serving import views

        panels.register("serving", "serving/partials/job_panel.html", views.job_serving_panel)
        panels.register("serving-latency", "serving/partials/job_latency.html",
                        views.job_serving_latency)
