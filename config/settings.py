"""Django settings, read from the environment (see README "Configuration")."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from controlplane.core.env import (
    envbool,
    envchoice,
    envfloat,
    envint,
    envrate,
    envsecret,
    envstr,
    envurl,
)
from controlplane.core.task_limits import check_visibility_timeout, soft_limit

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("CP_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = envbool("DEBUG", False)
SECRET_KEY = envsecret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY (or SECRET_KEY_FILE) must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-for-debug"

ALLOWED_HOSTS = [h.strip() for h in envstr("ALLOWED_HOSTS", "localhost,127.0.0.1").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in envstr("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # The control plane's apps, lowest layer first (README "Layout"; import-linter holds it).
    "controlplane.core",
    "controlplane.backends",
    "controlplane.teams",
    "controlplane.security",
    "controlplane.runs",
    "controlplane.logs",
    "controlplane.costs",
    "controlplane.sweeps",
    "controlplane.serving",
    "controlplane.clusters",
    "controlplane.notifications",
    "controlplane.compose",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Early, so it compresses what the rest made: JSON GET answers only (its docstring: no
    # HTML, for BREACH; no streams, so the live log stream is never held back).
    "controlplane.core.compression.JsonGZipMiddleware",
    "controlplane.core.bounded.RefuseNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "controlplane.core.csp.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
    {
        # The pages' hot fragments (each app's jinja2/ directory), drawn where Django's engine
        # is too slow for them: controlplane/runs/fragments.py.
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "NAME": "jinja2",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {"environment": "controlplane.runs.fragments.environment"},
    },
]

_database_url = envurl(
    "DATABASE_URL",
    f"sqlite:///{VAR_DIR / 'controlplane.sqlite3'}",
    ("sqlite", "postgres", "postgresql", "pgsql"),
)
try:
    DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=60)}
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL={_database_url!r} cannot be parsed: {exc}") from exc
# A kept connection is checked (a round trip) before its first use in each request or task: one
# the server dropped (a restart, an idle timeout, pg_terminate_backend) is opened again instead
# of failing what runs on it.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if envbool("CP_DB_POOL", False) and DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # Under ASGI (config/asgi.py sets CP_DB_POOL) each request runs in a thread of its own,
    # so a connection kept by the thread would outlive it: connections come from a pool
    # per process instead (psycopg_pool), handed back at the end of each request.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Django would hand the health check to psycopg_pool as its `check`; with it, the web
    # server's first requests after every pooled connection was dropped waited out the pool's
    # timeout in a loaded run (not understood yet). Without it a request on a dropped pooled
    # connection fails once and the pool replaces that connection.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 2, "max_size": envint("CP_DB_POOL_MAX", 10, minimum=1), "timeout": 10}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Workers, beat and the web server share one file: wait for locks instead of failing.
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Every team's jobs and secrets are in this file: readable by its owner only, so a job's
    # process on the same host (the local emulator's sandbox user) cannot open it.
    for _suffix in ("", "-wal", "-shm", "-journal"):
        _file = Path(str(DATABASES["default"]["NAME"]) + _suffix)
        if _file.is_file() and _file.stat().st_mode & 0o077:
            _file.chmod(0o600)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
# One collected copy can serve several local stacks (the tests collect once for all of theirs).
STATIC_ROOT = Path(envstr("CP_STATIC_ROOT", str(VAR_DIR / "staticfiles")))
# WhiteNoise scans STATIC_ROOT at start-up; an empty one is fine (files come from the finders).
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Serve from the finders in development so `make demo` needs no collectstatic.
WHITENOISE_USE_FINDERS = True
# Hashed, compressed copies once collectstatic has run (controlplane/core/storage.py).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "controlplane.core.storage.StaticStorage"},
}
# Source maps the vendored libraries name but do not ship are not an error.
WHITENOISE_MANIFEST_STRICT = False

# Password reset mails: printed to the console in development; SMTP (EMAIL_HOST...) otherwise.
EMAIL_BACKEND = envstr("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend"
                       if DEBUG else "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25, minimum=1)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "vertex-control-plane@localhost")

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Production (DEBUG off) is served over HTTPS: redirect plain HTTP and tell browsers to stay on
# HTTPS (HSTS). Behind a TLS-terminating proxy, set SECURE_PROXY_SSL_HEADER=true so Django
# trusts its X-Forwarded-Proto; SECURE_SSL_REDIRECT=false leaves the redirect to the proxy.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", not DEBUG)
if envbool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The health of a server behind a load balancer is asked over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz/$"]

# Redis' password (REDIS_PASSWORD, or the file REDIS_PASSWORD_FILE names): added to every Redis
# URL below that carries none (broker, cache, live pages), so the URLs themselves can be
# written where the password may not be (docker-compose.yml).
REDIS_PASSWORD = envsecret("REDIS_PASSWORD")


def _with_redis_password(url: str) -> str:
    parts = urlsplit(url)
    if not REDIS_PASSWORD or parts.scheme not in ("redis", "rediss") or "@" in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=f":{quote(REDIS_PASSWORD, safe='')}@{parts.netloc}"))


# Throttle and login-failure counters live in this cache, shared by every web process: Redis
# when CP_CACHE_URL names one (redis://...), otherwise a table in the database (created by a
# migration), never one process's memory, where each worker would count alone.
_cache_url = _with_redis_password(envstr("CP_CACHE_URL", ""))
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _cache_url}
        if _cache_url else
        {"BACKEND": "django.core.cache.backends.db.DatabaseCache",
         "LOCATION": "cp_shared_cache"}
    ),
}
CP_API_RATE_USER = envrate("CP_API_RATE_USER", "1200/minute")
CP_API_RATE_ANON = envrate("CP_API_RATE_ANON", "120/minute")
# Failed logins per account (five times as many per client address) before the login page
# refuses for the rest of the window; 0 turns the limit off (controlplane/security/login.py).
# /api/schema/ and /api/docs/ without signing in: on in development (the client generator and
# the stack tests read it), off in production unless set (controlplane/core/api_schema.py).
CP_API_SCHEMA_PUBLIC = envbool("CP_API_SCHEMA_PUBLIC", DEBUG)
CP_LOGIN_MAX_FAILURES = envint("CP_LOGIN_MAX_FAILURES", 10, minimum=0)
CP_LOGIN_LOCKOUT_S = envint("CP_LOGIN_LOCKOUT_S", 900, minimum=1)

# The largest request body the API reads (JSON, YAML or text) and Django's own form limit.
CP_MAX_BODY_BYTES = envint("CP_MAX_BODY_BYTES", 1_000_000, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = CP_MAX_BODY_BYTES

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "controlplane.security.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "controlplane.security.throttling.UserRate",
        "controlplane.security.throttling.AnonRate",
    ],
    # A client is its address as the server sees it, as the login lockout counts it: never an
    # X-Forwarded-For header, which any client may write to dodge its rate limit.
    "NUM_PROXIES": 0,
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only: every API body is a JSON document (the import also reads YAML text, its own),
    # bounded in size, depth and numbers (controlplane/core/bounded.py).
    "DEFAULT_PARSER_CLASSES": ["controlplane.core.bounded.BoundedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "controlplane.core.pagination.CappedLimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "controlplane.core.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Vertex Control Plane API",
    "VERSION": "1",
    "DESCRIPTION": "Compose, validate, submit and follow Vertex AI training jobs. "
                   "Authenticate with `Authorization: Token <key>` (keys are made at /tokens/) "
                   "or, from the browser, with the session and its CSRF token.",
    # Swagger UI's files come from drf-spectacular-sidecar: /api/docs/ loads nothing from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Tags and operation ids from the path after /api/v1/ (jobs_list, serving_endpoints_create):
    # the generated client's modules and functions are named by them.
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # The job's parallelism strategy, one enum wherever a job body appears.
    "ENUM_NAME_OVERRIDES": {"JobStrategyEnum": "vertexplan.composer.parallelism.STRATEGIES",
                            "StateEnum": "controlplane.runs.models.JobState",
                            "JobKindEnum": "controlplane.runs.models.JobKind",
                            "SweepStateEnum": "controlplane.sweeps.models.SweepState"},
}

# --- Celery -------------------------------------------------------------------------------
REDIS_URL = _with_redis_password(envstr("REDIS_URL", "redis://127.0.0.1:6379/0"))
CELERY_BROKER_URL = _with_redis_password(envurl(
    "CELERY_BROKER_URL", REDIS_URL, ("redis", "rediss", "sqla+sqlite", "sqla+postgresql", "memory")
))
CELERY_TASK_DEFAULT_QUEUE = envstr("CELERY_QUEUE_PREFIX", "cp") + "-default"
# Tasks are short (seconds); the visibility timeout only needs to exceed the longest one,
# so a task lost with its worker is redelivered within minutes, not hours. (Redis only: the
# SQLAlchemy transport of the demo hands its options to create_engine.)
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {"visibility_timeout": envint("CP_BROKER_VISIBILITY_TIMEOUT_S", 600, minimum=10)}
    if CELERY_BROKER_URL.startswith("redis") else {}
)
# Every task's hard time limit (the worker kills it there), and the one of the few tasks that
# may run longer (log retention, pruning old latency samples); each soft limit is 80 % of its
# hard one. Both stay below the visibility timeout, or the process does not start: a task
# running past it would be delivered again and run twice (controlplane/core/task_limits.py).
CP_TASK_TIME_LIMIT_S = envint("CP_TASK_TIME_LIMIT_S", 300, minimum=2)
CP_LONG_TASK_TIME_LIMIT_S = envint("CP_LONG_TASK_TIME_LIMIT_S", 540, minimum=2)
check_visibility_timeout(CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout"), {
    "CP_TASK_TIME_LIMIT_S": CP_TASK_TIME_LIMIT_S,
    "CP_LONG_TASK_TIME_LIMIT_S": CP_LONG_TASK_TIME_LIMIT_S,
})
# Also for Celery's own tasks; the project's get theirs from its task decorator.
CELERY_TASK_SOFT_TIME_LIMIT = soft_limit(CP_TASK_TIME_LIMIT_S)
CELERY_TASK_TIME_LIMIT = CP_TASK_TIME_LIMIT_S
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fixup closes the database connection before and after every task unless this
# is set: a new PostgreSQL backend for each of beat's ticks, several a second. A worker process
# keeps its connection instead, renewed as a web request's is (CONN_MAX_AGE and the health
# check: config/celery.py), and closed by the fixup after this many tasks.
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_IGNORE_RESULT = True
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Live pages: what the follower and the reconciler store is published on Redis pub/sub (after
# the commit) to the job page's event stream and `vcp logs -f`. Defaults to the broker when it
# is Redis; empty turns the push off, and the pages poll instead.
CP_LIVE_URL = _with_redis_password(envstr(
    "CP_LIVE_URL",
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis:", "rediss:")) else ""))
# An event stream ends after this long and the client reconnects (checking access again).
CP_LIVE_STREAM_S = envfloat("CP_LIVE_STREAM_S", 300.0, minimum=1.0)
# Each open stream holds a Redis connection: a user may hold this many at once (beyond: 429);
# 0 lifts the cap.
CP_LIVE_STREAMS_PER_USER = envint("CP_LIVE_STREAMS_PER_USER", 10, minimum=0)
CP_RECONCILE_INTERVAL_S = envfloat("CP_RECONCILE_INTERVAL_S", 5.0, minimum=0.5)
CP_FOLLOW_INTERVAL_S = envfloat("CP_FOLLOW_INTERVAL_S", 3.0, minimum=0.5)
# The sweeps of Ray clusters, hyperparameter sweeps, serving and the Slack outbox: by default
# as often as the jobs'; a site (or a test stack) where they matter less ticks them less often.
CP_RESOURCE_RECONCILE_INTERVAL_S = envfloat("CP_RESOURCE_RECONCILE_INTERVAL_S",
                                            CP_RECONCILE_INTERVAL_S, minimum=0.5)
# A queued job with no CustomJob after this long gets its submission queued again.
CP_RESUBMIT_AFTER_S = envfloat("CP_RESUBMIT_AFTER_S", 30.0, minimum=1.0)
# A job Vertex refused for quota is tried again after this, doubling up to the cap.
CP_QUOTA_RETRY_S = envfloat("CP_QUOTA_RETRY_S", 30.0, minimum=0.5)
CP_QUOTA_RETRY_CAP_S = envfloat("CP_QUOTA_RETRY_CAP_S", 600.0, minimum=1.0)
# How long the Cloud Quotas API's limits are kept before they are read again.
CP_QUOTA_CACHE_S = envfloat("CP_QUOTA_CACHE_S", 300.0, minimum=0.0)
# The queue in front of Vertex (controlplane/runs/admission.py): new jobs wait in QUEUED_LOCAL
# for their team's share of the project's accelerators and a periodic task admits them.
CP_ADMISSION = envbool("CP_ADMISSION", False)
# Costs: how often team budgets are checked against the month's spend, and where
# refresh_prices writes the price table it reads from the Cloud Billing Catalog API.
CP_BUDGET_CHECK_INTERVAL_S = envfloat("CP_BUDGET_CHECK_INTERVAL_S", 60.0, minimum=0.5)
CP_PRICES_FILE = envstr("CP_PRICES_FILE", str(VAR_DIR / "prices" / "vertex_training_prices.csv"))
CP_BILLING_CATALOG_ADDR = envstr("CP_BILLING_CATALOG_ADDR", "")

# --- Vertex AI --------------------------------------------------------------------------
# CP_BACKEND is a dotted path: the Vertex backend talks to Google, or to the local emulator
# when VERTEX_EMULATOR_ADDR (host:port, plaintext gRPC) is set.
CP_BACKEND = envstr("CP_BACKEND", "controlplane.backends.training.VertexBackend")
# The serving backend (dotted path) and where Vertex's own latency figures come from: a dotted
# path, empty for none, or "auto" (Cloud Monitoring against Google, none against the emulator).
CP_SERVING_BACKEND = envstr("CP_SERVING_BACKEND", "controlplane.backends.serving.VertexServing")
# How long a deployment of the compiled runtime may take to answer its health route: each replica
# compiles the model before it answers, minutes on a CPU, where Vertex's default is 5 minutes
# (containerSpec.deploymentTimeout, at most 2 hours).
CP_SERVING_COMPILED_DEPLOY_TIMEOUT_S = envint("CP_SERVING_COMPILED_DEPLOY_TIMEOUT_S", 1800,
                                              minimum=300, maximum=7200)
CP_CLUSTER_BACKEND = envstr("CP_CLUSTER_BACKEND", "controlplane.backends.clusters.VertexClusters")
# A running cluster with no Ray job and no CustomJob on it for this long is flagged idle: it
# bills all the same (controlplane/clusters/idle.py).
CP_CLUSTER_IDLE_FLAG_S = envfloat("CP_CLUSTER_IDLE_FLAG_S", 3600.0, minimum=60.0)
CP_LATENCY_SOURCE = envstr("CP_LATENCY_SOURCE", "auto")
# Where a deploy checks that its image's tag exists (dotted path to an ImageRegistry): Artifact
# Registry, Google's or the emulator's (VERTEX_EMULATOR_ADDR).
CP_IMAGE_REGISTRY = envstr("CP_IMAGE_REGISTRY",
                           "controlplane.backends.artifact_registry.ArtifactRegistryImages")
# The Artifact Registry locations whose docker repositories the image picker lists (a team sees
# those labelled cp-team=<its slug>); empty: the region's (VERTEX_REGION).
CP_IMAGE_LOCATIONS = [loc.strip() for loc in envstr("CP_IMAGE_LOCATIONS", "").split(",")
                      if loc.strip()]
VERTEX_EMULATOR_ADDR = envstr("VERTEX_EMULATOR_ADDR", "")
# The emulator's bearer token (localvertex/auth.py), best as VERTEX_EMULATOR_TOKEN_FILE: the
# emulator's <data dir>/auth_token, or the file its --token-file names. Every call to the
# emulator carries it; without it the emulator answers UNAUTHENTICATED.
VERTEX_EMULATOR_TOKEN = envsecret("VERTEX_EMULATOR_TOKEN")
VERTEX_PROJECT = envstr("VERTEX_PROJECT", "local-project")
VERTEX_REGION = envchoice(
    "VERTEX_REGION",
    "us-central1",
    (
        "us-central1", "us-east1", "us-east4", "us-west1", "us-west4", "europe-west1",
        "europe-west4", "asia-east1", "asia-northeast1", "asia-southeast1",
    ),
)
VERTEX_RPC_TIMEOUT_S = envfloat("VERTEX_RPC_TIMEOUT_S", 30.0, minimum=1.0)
CP_OUTPUT_URI = envurl("CP_OUTPUT_URI", "gs://cp-local-bucket/jobs", ("gs",)).rstrip("/")
CP_DEFAULT_IMAGE = envstr(
    "CP_DEFAULT_IMAGE", "us-central1-docker.pkg.dev/local-project/training/trainers:0.1.0"
)
# The images of TPU jobs that name none (Dockerfile.tpu-jax and Dockerfile.tpu-xla at the
# repository root): our own builds, since Google lists no prebuilt v5e training containers.
CP_TPU_JAX_IMAGE = envstr(
    "CP_TPU_JAX_IMAGE",
    "us-central1-docker.pkg.dev/local-project/training/trainers-tpu-jax:0.1.0",
)
CP_TPU_XLA_IMAGE = envstr(
    "CP_TPU_XLA_IMAGE",
    "us-central1-docker.pkg.dev/local-project/training/trainers-tpu-xla:0.1.0",
)
# The local folder the emulator keeps its buckets in (`<emulator data dir>/gcs`): a path a
# trainer prints under it stands for gs://bucket/...; events naming paths are checked against
# the job's output prefix (controlplane/logs/trust.py). Empty against Google: only gs:// and
# /gcs/ (Cloud Storage FUSE) paths then name objects.
CP_LOCAL_STORAGE_ROOT = envstr(
    "CP_LOCAL_STORAGE_ROOT",
    envstr("CP_LOCAL_GCS_ROOT",
           str(VAR_DIR / "localvertex" / "gcs") if VERTEX_EMULATOR_ADDR else ""))
# The same folder, under the name the checkpoint checks at submit read (backends/storage.py).
CP_LOCAL_GCS_ROOT = CP_LOCAL_STORAGE_ROOT
# A Cloud Storage emulator (its scheme, host and port, as Google's client reads the variable):
# when set, gs:// objects and bucket locations are read there, even beside the Vertex emulator.
STORAGE_EMULATOR_HOST = envstr("STORAGE_EMULATOR_HOST", "")
# Links in notifications point here.
CP_BASE_URL = envstr("CP_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
CP_LOG_PAGE_SIZE = envint("CP_LOG_PAGE_SIZE", 1000, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
