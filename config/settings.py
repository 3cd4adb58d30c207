"""Django settings for Reconcile.

Everything configurable is read from RECONCILE_* environment variables (see README), plus the
conventional DATABASE_URL and CELERY_BROKER_URL. With none set, the embedded mode runs:
SQLite in WAL mode and kombu's filesystem broker under var/.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

from config.any_host import PLAIN_HTTP_PATHS
from config.cache import cache_settings
from config.database import database_settings
from config.env import (
    INSECURE_SECRET,
    env_bool,
    env_int,
    env_list,
    env_rate,
    env_str,
    env_timezone,
    production_checks,
)
from config.logs import logging_settings
from config.queues import TASK_QUEUES, TASK_ROUTES
from config.schedule import beat_schedule

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

PRODUCTION = env_bool("PRODUCTION", False)
# Off unless asked for: tracebacks and query logging are for development only.
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", INSECURE_SECRET)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
if PRODUCTION:
    production_checks(debug=DEBUG, secret_key=SECRET_KEY, allowed_hosts=ALLOWED_HOSTS)

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "django_htmx",
    "django_tables2",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "reconcile_app",
    "lineage_app",
    "sandbox_app",
    "drills_app",
]

MIDDLEWARE = [
    # Outermost, so a request's time on /metrics covers every middleware below.
    "config.http_metrics.RequestMetricsMiddleware",
    # Before anything that may refuse a request (a Host outside ALLOWED_HOSTS, the HTTPS
    # redirect): those answers carry an id too, and their log lines not the last request's.
    "reconcile_app.request_id.RequestIdMiddleware",
    "config.any_host.AnyHostMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "reconcile_app.api.middleware.BodyLimitMiddleware",
    "reconcile_app.security.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "reconcile_app.api.middleware.ApiProblemMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "reconcile_app.request_id.LogPrincipalMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # After messages: a session ended for idleness says so on the sign-in page.
    "reconcile_app.console.session_limits.SessionLimitsMiddleware",
    # A refused plain form post comes back at its page's URL, not the action's (no re-post).
    "reconcile_app.console.refusals.RefusedFormRedirectMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "reconcile_app.console.context.navigation",
                "reconcile_app.security.csp_nonce",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
# PostgreSQL from DATABASE_URL, else SQLite in WAL mode with IMMEDIATE transactions, however
# it is named (config/database.py).
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DATABASES = database_settings(
    database_url=DATABASE_URL,
    sqlite_path=env_str("SQLITE_PATH", str(VAR_DIR / "reconcile.sqlite3")),
    sqlite_test_path=str(VAR_DIR / "test-reconcile.sqlite3"),
    postgresql_prepared_statements=env_bool("PG_PREPARED_STATEMENTS", True),
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files: all served locally (the console must work on a closed network) -----------
STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "reconcile_app.console.staticfinders.PlotlyJsFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": env_str(
            "STATICFILES_STORAGE",
            # whitenoise's hashed, gzip- and Brotli-compressed files (config/staticfiles.py)
            "config.staticfiles.CompressedStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage",
        )
    },
}
WHITENOISE_USE_FINDERS = not PRODUCTION

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

SESSION_COOKIE_HTTPONLY = True
# A console session ends after RECONCILE_SESSION_IDLE_MINUTES without a request and, however
# busy, RECONCILE_SESSION_MAX_HOURS after sign-in (reconcile_app/console/session_limits.py).
RECONCILE_SESSION_IDLE_SECONDS = 60 * env_int("SESSION_IDLE_MINUTES", 30, minimum=1)
SESSION_COOKIE_AGE = 3600 * env_int("SESSION_MAX_HOURS", 12, minimum=1)
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    # Defaults for TLS (direct, or a proxy setting X-Forwarded-Proto); each may be relaxed.
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    SECURE_SSL_REDIRECT = env_bool("SSL_REDIRECT", True)
    # Probes and the metrics scrape come over plain HTTP inside the network.
    SECURE_REDIRECT_EXEMPT = PLAIN_HTTP_PATHS
    SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD", True)
    if env_bool("BEHIND_TLS_PROXY", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- Cache: shared by all processes (throttles, failure counters, worker heartbeats) -------
# RECONCILE_CACHE_URL, else the broker's Redis server on the next database, else a file cache
# (config/cache.py).
CACHE_URL = env_str("CACHE_URL", "")
CACHES = cache_settings(
    cache_url=CACHE_URL,
    broker_url=os.environ.get("CELERY_BROKER_URL", "filesystem://"),
    var_dir=VAR_DIR,
)
# Failed attempts tolerated per 15 minutes before refusing: per username for sign-in (and
# four times that per address), per address for API keys.
RECONCILE_FAILURE_LIMITS = {
    "login": env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1),
    "api_key": env_int("API_KEY_FAILURE_LIMIT", 20, minimum=1),
}
# Reverse proxies in front that each append the address they received from to
# X-Forwarded-For. 0: the socket's address is the client's, and X-Forwarded-For (which any
# client can write) is ignored; N: the N-th address from the right. One rule for every
# throttle and failure counter (reconcile_app.security.client_address).
RECONCILE_TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
if RECONCILE_TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured(
        f"RECONCILE_TRUSTED_PROXY_COUNT must be 0 or more, got {RECONCILE_TRUSTED_PROXY_COUNT}"
    )

# --- REST framework -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "reconcile_app.api.authentication.BearerKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["reconcile_app.api.parsers.SafeJSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "reconcile_app.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "reconcile_app.api.problems.problem_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["reconcile_app.security.PrincipalRateThrottle"],
    # Left at None, DRF's throttles would believe any X-Forwarded-For a client sends.
    "NUM_PROXIES": RECONCILE_TRUSTED_PROXY_COUNT,
    "DEFAULT_THROTTLE_RATES": {
        "principal": env_rate("API_RATE", "1200/min"),
        "anon": env_rate("API_ANON_RATE", "120/min"),
    },
    "DEFAULT_SCHEMA_CLASS": "reconcile_app.api.autoschema.ReconcileAutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DATETIME_FORMAT": "iso-8601",
    # `?format=` belongs to endpoints (PROV export), not to renderer negotiation.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Reconcile API",
    "DESCRIPTION": "The reconciliation boundary between AI agents and the systems they act on.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Every closed set of values is an enum named after what it is (clients generated from
    # the schema get one type per set, never "Status634Enum"). Open sets (reason codes, which
    # contracts extend; problem codes, which grow) stay strings.
    "ENUM_NAME_OVERRIDES": {
        "GateStatusEnum": ["passed", "failed", "not_required"],
        "ActivationStatusEnum": "reconcile_app.choices.ActivationStatus",
        "ContractStatusEnum": "reconcile_app.choices.ContractStatus",
        "ObligationLevelEnum": "reconcile_app.choices.ObligationLevel",
        "EffectStatusEnum": "reconcile_app.choices.EffectStatus",
        "FieldStatusEnum": "reconcile_app.choices.ReadStatus",
        "CompletenessEnum": "reconcile_app.choices.Completeness",
        "DecisionResultEnum": "reconcile_app.choices.DecisionResult",
        "VerdictEnum": "reconcile_app.choices.Verdict",
        "EvidenceKindEnum": "reconcile_app.choices.EvidenceKind",
        "MemoryStatusEnum": "reconcile_app.choices.MemoryStatus",
        "MemoryKindEnum": "reconcile_app.choices.MemoryKind",
        "MemoryAdmissionEnum": "reconcile_app.choices.MemoryAdmission",
        "PrincipalKindEnum": "reconcile_app.choices.PrincipalKind",
        "RoleEnum": "reconcile_app.choices.Role",
        "ContradictionKindEnum": "reconcile_app.choices.ContradictionKind",
        "ContradictionStatusEnum": "reconcile_app.choices.ContradictionStatus",
        "EscalationStatusEnum": "reconcile_app.choices.EscalationStatus",
        "QuarantineScopeEnum": "reconcile_app.choices.QuarantineScope",
        "QuarantineStatusEnum": "reconcile_app.choices.QuarantineStatus",
        "CorrectionStatusEnum": "reconcile_app.choices.CorrectionStatus",
        "ConsistencyEnum": "reconcile_app.choices.Consistency",
        "FaultKindEnum": "sandbox_app.choices.FaultKind",
        "ReplayModeEnum": ["as_recorded", "corrected"],
        "FactAnswerCodeEnum": ["ok"],
        "ResolutionOutcomeEnum": ["succeeded", "not_executed"],
        # An obligation assessment's answers (docs/api.md, "Contract versions").
        "ObligationRatingEnum": ["low", "high"],
        "ObligationAuthorityEnum": ["single", "contested"],
        "ObligationReplayEnum": ["none", "required"],
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "reconcile_app.api.schema.document_problems",
    ],
}

# --- Lineage (lineage_app knows nothing of reconcile: the project says who may read it) ------
# Lineage, blast radius and PROV are for people: agents get 403 `people_only`.
LINEAGE_API_PERMISSION_CLASSES = ["reconcile_app.api.permissions.PeopleOnly"]
# The explorer page: people in a role (operator, reviewer, auditor), not agents' users.
LINEAGE_CONSOLE_ACCESS = "reconcile_app.roles.is_staff_role"
LINEAGE_PROV_NAMESPACE = ("rc", "https://reconcile.invalid/ns#")

# --- Celery ---------------------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
# How long Redis waits for a task's acknowledgement before handing its message to another
# worker (late acks): every task's hard time limit must end before it.
BROKER_VISIBILITY_TIMEOUT_SECONDS = 3600
if CELERY_BROKER_URL.startswith("filesystem://"):
    for folder in ("in", "processed", "control"):
        (BROKER_DIR / folder).mkdir(parents=True, exist_ok=True)
    # kombu's filesystem transport, writing each message whole before a worker can see it
    # (config/broker.py).
    CELERY_BROKER_TRANSPORT = "config.broker:FilesystemTransport"
    # One folder for both directions: producers and the worker must see the same queue.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "in"),
        "data_folder_out": str(BROKER_DIR / "in"),
        "processed_folder": str(BROKER_DIR / "processed"),
        # Broadcast (inspect ping, remote control) files, otherwise written to the cwd.
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # A worker holding its one prefetched message looks for the next only after the
        # task ends, then sleeps this long when it finds none yet: kombu's default second
        # capped each worker process at about one task a second (a listing of a small
        # folder ten times a second costs nothing).
        "polling_interval": 0.1,
    }
else:
    # Keep every task's time limit below the visibility timeout, or Redis redelivers tasks
    # still running.
    # kombu reads Redis without a timeout unless told: a broker that accepts and never answers
    # would hold a request's publish for good (with the default 3 retries: 20 s at most).
    BROKER_SOCKET_TIMEOUTS = dict.fromkeys(("socket_timeout", "socket_connect_timeout"), 5)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": BROKER_VISIBILITY_TIMEOUT_SECONDS,
        **BROKER_SOCKET_TIMEOUTS,
    }
# Nothing reads a task's return value (every outcome is a row of the domain: an effect's
# status, a run's report), so none is stored.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# On a lost broker connection, stop running tasks: their messages are redelivered (late acks)
# and every task is idempotent, so nothing runs twice at the same time.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_TASK_TIME_LIMIT = 600
# One queue per kind of work, so each can get its own workers (docs/deploy.md): readbacks
# and unknown-outcome resolution are what agents wait on and must not queue behind a drill
# or a large correction's blast radius. A worker started without -Q consumes all four.
CELERY_TASK_QUEUES = [Queue(name, Exchange(name), routing_key=name) for name in TASK_QUEUES]
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = TASK_ROUTES
CELERY_TASK_SOFT_TIME_LIMIT = 540
# Readbacks' and resolutions' own limit: it bounds a worker's timers (docs/deploy.md, Workers)
# (its hard limit, 30 s later, stays under the broker's visibility timeout with a margin).
RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT = env_int(
    "OWNER_TASK_SOFT_TIME_LIMIT", 120, minimum=1, maximum=BROKER_VISIBILITY_TIMEOUT_SECONDS - 60
)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_EAGER", False)
# Workers log through LOGGING above (JSON lines with the task's request id), not Celery's own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Warns while another scheduler runs (config/beat.py): there must be exactly one.
CELERY_BEAT_SCHEDULER = "config.beat.ExclusiveScheduler"
# At least a second: a period of 0 or less would send each run already expired (never run).
CELERY_BEAT_SCHEDULE = beat_schedule(
    sweep_effects_every=float(env_int("SWEEP_EFFECTS_EVERY_SECONDS", 30, minimum=1)),
    expire_memories_every=float(env_int("EXPIRE_MEMORIES_EVERY_SECONDS", 900, minimum=1)),
)

# --- Reconcile ------------------------------------------------------------------------------
RECONCILE_ADAPTERS = {
    "sandbox": "sandbox_app.adapter.SandboxAdapter",
    "http": "reconcile_app.sources.http.HttpAdapter",
}
# The timezone in which memory records' valid_until dates are inclusive.
RECONCILE_FACT_TIMEZONE = env_timezone("FACT_TIMEZONE", "UTC")
# A bearer token a Prometheus scraper may use for /metrics (empty: people in a role only).
RECONCILE_METRICS_TOKEN = env_str("METRICS_TOKEN", "")
# Where escalations go when the owner's system names no owner.
RECONCILE_FALLBACK_OWNER = env_str("FALLBACK_OWNER", "platform-operations")
# At least 1 ms: at 0 every owner call fails at once, below 0 httpx raises ValueError on each.
RECONCILE_HTTP_TIMEOUT_SECONDS = float(env_int("HTTP_TIMEOUT_MS", 2000, minimum=1)) / 1000.0
# How long the `http` adapter keeps an idle connection to an owner for its next call; it must
# be shorter than the owners' own idle timeout (reconcile_app.sources.owner_client). 0: none.
RECONCILE_HTTP_KEEPALIVE_SECONDS = float(env_int("HTTP_KEEPALIVE_MS", 1000)) / 1000.0
if RECONCILE_HTTP_KEEPALIVE_SECONDS < 0:
    raise ImproperlyConfigured("RECONCILE_HTTP_KEEPALIVE_MS must be 0 or more")
# Request bodies larger than this are refused with 413 before anything reads them.
RECONCILE_MAX_BODY_BYTES = env_int("MAX_BODY_BYTES", 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = RECONCILE_MAX_BODY_BYTES
# A source file's `auth_token_env` may only name variables under this prefix: the file picks
# the variable and the base_url its value is sent to, so without a fence it could ship
# RECONCILE_SECRET_KEY or DATABASE_URL to any host.
RECONCILE_SOURCE_TOKEN_ENV_PREFIX = env_str(
    "SOURCE_TOKEN_ENV_PREFIX", "RECONCILE_SOURCE_TOKEN_", empty_is_unset=False
)
if not RECONCILE_SOURCE_TOKEN_ENV_PREFIX.strip():
    raise ImproperlyConfigured(
        "RECONCILE_SOURCE_TOKEN_ENV_PREFIX must not be empty: it would let source files name "
        "any environment variable as an owner's token."
    )

# One JSON line per event (config/logs.py); RECONCILE_LOG_FORMAT=text for a terminal. Empty
# is unset, as for every setting (config/env.py; ./dev reads them the same way).
LOGGING_CONFIG = "config.logs.configure"
LOGGING = logging_settings(
    log_format=env_str("LOG_FORMAT", "json").strip(),
    level=env_str("LOG_LEVEL", "INFO").strip(),
)
