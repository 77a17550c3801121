"""Why the window may not reach the network now, with the remedy for its cause.

Offline mode has four causes, and each is undone in its own place: "Offline" ticked in
Settings (the user's file), ``EDGEDESK_OFFLINE`` in the environment, ``--offline`` on
the command line, or the machine policy's ``ForceOffline``; model downloads alone are
turned off by ``allow_downloads = false`` or the policy's ``AllowDownloads``.
``EffectiveSettings.sources`` says which layer set each value, so the window names the
one that applies instead of sending everybody to Settings. The download and search
buttons show this text (disabled) before they are pressed; importing a .gguf file needs
no network and stays available. Window's thread only (Qt's translators).
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QCoreApplication

from desktop.base.config import EffectiveSettings


class SettingsInForce(Protocol):
    """What the refusal reads: the settings in force and where each came from."""

    @property
    def effective(self) -> EffectiveSettings:
        """The settings in force, their sources and what the policy locks."""


def offline_text(effective: EffectiveSettings) -> str | None:
    """Why nothing may go out (offline mode) and how to undo it, or None when online."""
    if not effective.settings.offline:
        return None
    source = effective.sources.get("offline", "user")
    if source == "policy":
        return QCoreApplication.translate(
            "NetworkMode",
            "EdgeDesk is offline by your organization's policy (ForceOffline): "
            "nothing is downloaded or searched. Importing a .gguf file still works.",
        )
    if source == "environment":
        return QCoreApplication.translate(
            "NetworkMode",
            "EdgeDesk is offline: the environment variable EDGEDESK_OFFLINE is set. "
            "Start EdgeDesk without it to download or search; importing a .gguf file "
            "still works.",
        )
    if source == "command line":
        return QCoreApplication.translate(
            "NetworkMode",
            "EdgeDesk is offline: it was started with --offline. Start it without "
            "--offline to download or search; importing a .gguf file still works.",
        )
    return QCoreApplication.translate(
        "NetworkMode",
        "EdgeDesk is offline: “Offline” is ticked in Settings (Network). Untick it "
        "to download or search; importing a .gguf file still works.",
    )


def download_refusal(effective: EffectiveSettings) -> str | None:
    """Why a model may not be downloaded now and how to undo it, or None when it may."""
    offline = offline_text(effective)
    if offline is not None or effective.settings.allow_downloads:
        return offline
    if effective.sources.get("allow_downloads") == "policy":
        return QCoreApplication.translate(
            "NetworkMode",
            "Model downloads are turned off by your organization's policy "
            "(AllowDownloads). Import a .gguf file you already have instead.",
        )
    return QCoreApplication.translate(
        "NetworkMode",
        "Model downloads are turned off (allow_downloads = false in settings.toml). "
        "Import a .gguf file you already have instead.",
    )
