"""The dialog that names a new API key or edits a key's scope: models, endpoints, expiry
in days and requests a minute, the same limits ``edgedesk keys create`` takes."""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStyle,
    QStyleOptionFrame,
    QVBoxLayout,
    QWidget,
)

from desktop.server import DAY_S, ENDPOINTS, KeyScope

NO_LIMIT_DAYS = 3650  # the spin box's ceiling when no policy caps a key's life


PLACEHOLDER_MARGIN = 14  # px beyond the placeholder's text: the cursor and a little air


def widen_to_placeholder(field: QLineEdit) -> None:
    """Make ``field`` wide enough to show its placeholder whole, as laid out now (frame
    and padding of the style and its style sheet included); call once it is shown."""
    need = field.fontMetrics().horizontalAdvance(field.placeholderText()) + PLACEHOLDER_MARGIN
    option = QStyleOptionFrame()
    field.initStyleOption(option)
    room = field.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, field)
    if room.width() < need:
        field.setMinimumWidth(field.width() + need - room.width())


@dataclass(frozen=True)
class ScopeChoice:
    """The limits a user picked, in ``KeyStore.create``/``set_scope`` terms (None: none)."""

    models: tuple[str, ...] | None = None
    endpoints: tuple[str, ...] | None = None
    expires_in_s: float | None = None
    rate_per_min: int | None = None


class KeyScopeDialog(QDialog):
    """Asks for a key's name (new keys only) and scope; GUI thread only.

    ``max_days`` is the policy's MaxKeyLifetimeDays: the expiry cannot go past it, and
    "never" is not offered under it.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        name: str | None = None,
        scope: KeyScope | None = None,
        now: float = 0.0,
        max_days: int | None = None,
    ) -> None:
        super().__init__(parent)
        editing = name is not None
        self.setWindowTitle(self.tr("Edit the key's scope") if editing else self.tr("New API key"))
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.name = QLineEdit(name or "")
        self.name.setReadOnly(editing)
        self.name.setPlaceholderText(self.tr("e.g. vscode"))
        self.name.setAccessibleName(self.tr("Name of the client"))
        form.addRow(self.tr("Client name:"), self.name)
        self.models = QLineEdit(",".join(scope.models) if scope and scope.models else "")
        self.models.setPlaceholderText(self.tr("Any model; or model ids, comma-separated"))
        # The hint whole, in either language: the field is at least as wide as its text.
        self.models.setAccessibleName(self.tr("Models the key may use"))
        form.addRow(self.tr("Models:"), self.models)
        labels = {
            "chat": self.tr("Chat"),
            "embeddings": self.tr("Embeddings"),
            "documents": self.tr("Documents"),
        }
        row = QHBoxLayout()
        self.endpoints: dict[str, QCheckBox] = {}
        for endpoint in ENDPOINTS:
            box = QCheckBox(labels[endpoint])
            box.setChecked(scope is None or scope.endpoints is None or endpoint in scope.endpoints)
            self.endpoints[endpoint] = box
            row.addWidget(box)
        form.addRow(self.tr("Endpoints:"), row)
        self.expiry = QSpinBox()
        self.expiry.setRange(0 if max_days is None else 1, max_days or NO_LIMIT_DAYS)
        self.expiry.setSpecialValueText(self.tr("never"))
        self.expiry.setSuffix(self.tr(" days"))
        self.expiry.setAccessibleName(self.tr("Expires after this many days"))
        left = (
            math.ceil((scope.expires - now) / DAY_S)
            if scope is not None and scope.expires is not None
            else None
        )
        self.expiry.setValue(max(1, left) if left is not None else (max_days or 0))
        form.addRow(self.tr("Expires in:"), self.expiry)
        self.rate = QSpinBox()
        self.rate.setRange(0, 100_000)
        self.rate.setSpecialValueText(self.tr("no limit"))
        self.rate.setSuffix(self.tr(" per minute"))
        self.rate.setAccessibleName(self.tr("Requests a minute"))
        self.rate.setValue((scope.rate_per_min or 0) if scope is not None else 0)
        form.addRow(self.tr("Rate:"), self.rate)
        layout.addLayout(form)
        if max_days is not None:
            cap = QLabel(
                self.tr("Your organization limits API keys to %1 days.").replace(
                    "%1", str(max_days)
                )
            )
            cap.setObjectName("Muted")
            layout.addWidget(cap)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def showEvent(self, event: QShowEvent) -> None:
        """Laid out: the Models field grows until its hint is whole (either language)."""
        super().showEvent(event)
        layout = self.layout()
        if layout is not None:
            layout.activate()
        widen_to_placeholder(self.models)

    def client_name(self) -> str:
        """The client's name as typed."""
        return self.name.text().strip()

    def choice(self) -> ScopeChoice:
        """The scope picked: unlimited where a field was left at its default."""
        models = tuple(m.strip() for m in self.models.text().split(",") if m.strip())
        picked = tuple(e for e, box in self.endpoints.items() if box.isChecked())
        days, rate = self.expiry.value(), self.rate.value()
        return ScopeChoice(
            models=models or None,
            endpoints=None if len(picked) == len(ENDPOINTS) else picked,
            expires_in_s=days * DAY_S if days else None,
            rate_per_min=rate or None,
        )
