"""pyguard's version, in a module of its own so that the CLI reads it without importing the public API."""

__all__ = ["__version__"]

__version__ = "0.1.0"
