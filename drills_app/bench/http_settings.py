"""Settings for the server `bench http` starts: the product's own, plus the bare endpoint."""

from config.settings import *  # noqa: F403 - the same settings as production, on purpose

ROOT_URLCONF = "drills_app.bench.bare"
