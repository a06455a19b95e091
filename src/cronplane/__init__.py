"""cronplane: a multi-tenant cron control plane."""

__version__ = "0.1.0"

__all__ = ["__version__"]
