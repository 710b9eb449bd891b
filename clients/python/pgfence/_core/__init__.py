"""The core both flavours share: errors, classification, settings, lease state."""
from .errors import (FenceError, LeaseLostError, LeaseNotHeldError, LeaseUnavailableError,
                     StaleTokenError, TokenRequiredError, classify)

__all__ = ["FenceError", "LeaseLostError", "LeaseNotHeldError", "LeaseUnavailableError",
           "StaleTokenError", "TokenRequiredError", "classify"]
