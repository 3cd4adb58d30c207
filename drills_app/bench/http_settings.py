"""Settings for the server `bench http` starts: the product's own, plus the bare endpoint."""

from config.settings import *  # noqa: F403 - the same settings as production, on purpose

ROOT_URLCONF = "drills_app.bench.bare"

# The database's CPU is read per process from /proc: a connection that closes during a window
# takes its share with it. Production's connections close after 60 s (config/database.py),
# which the rounds and the commits' window outlast, so a window could miss a connection's
# share; here they stay open, sparing one reconnection per worker a minute.
DATABASES["default"]["CONN_MAX_AGE"] = None  # noqa: F405
