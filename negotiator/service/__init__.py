"""The HTTP service (FastAPI) behind ``negotiator serve``."""

from .app import ServiceSettings, create_app
from .models import CreateNegotiation, ErrorBody

__all__ = ["ServiceSettings", "create_app", "CreateNegotiation", "ErrorBody"]
