"""tracemill: turns an LLM agent's OpenTelemetry traces into a failure map and training data.

The shared core: settings, the DuckDB store with its migrations, and the command line.
Components live in the top-level packages ``collector``, ``processor`` and ``generator``.
"""

from tracemill.config import Settings, load_settings
from tracemill.errors import ConfigError, SchemaError, StoreError, StoreLockedError, TracemillError
from tracemill.store import Store, open_store

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "SchemaError",
    "Settings",
    "Store",
    "StoreError",
    "StoreLockedError",
    "TracemillError",
    "__version__",
    "load_settings",
    "open_store",
]
