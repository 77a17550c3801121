"""EdgeDesk: private, on-device LLM desktop app."""

__version__ = "0.1.0"
