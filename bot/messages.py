"""Moved to `pipeline.messages` (the neutral types adapters, service and stores share); kept so code that still
imports them from here works. New code imports `pipeline.messages`."""

from pipeline.messages import *  # noqa: F403
from pipeline.messages import __all__  # noqa: F401
