"""Attaching pictures and documents to a chat message: the chips above the message box,
the Attach button's file dialog, pasting and dropping, and thumbnails in the transcript.

Window's thread only. Reading a file (a PDF's text) blocks, so it runs on a worker when
the view has a pool; the chips appear when it is done.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QEvent,
    QIODevice,
    QMimeData,
    QObject,
    QSize,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QImageReader, QImageWriter, QPixmap
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.base.errors import EdgeDeskError
from desktop.chat import Attachment, from_bytes, from_path
from desktop.engine import DEFAULT_LIMITS, ImageLimits
from desktop.ui.common.error_text import error_text
from desktop.ui.common.look import icon
from desktop.ui.common.workers import TaskWorker, WorkerPool

CHIP_THUMB = QSize(40, 40)
TRANSCRIPT_THUMB = QSize(220, 160)
PICTURES = "*.png *.jpg *.jpeg *.gif *.webp *.bmp"
DOCUMENTS = "*.txt *.md *.markdown *.pdf *.docx *.html *.csv"


def thumbnail(data: bytes, box: QSize) -> QPixmap:
    """The picture scaled down to fit ``box`` (decoded at that size where the format
    allows); an empty pixmap when Qt cannot read it."""
    array = QByteArray(data)
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    size = reader.size()
    if size.isValid() and (size.width() > box.width() or size.height() > box.height()):
        reader.setScaledSize(size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    buffer.close()
    if image.isNull():
        return QPixmap()
    if image.width() > box.width() or image.height() > box.height():
        image = image.scaled(
            box, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
    return QPixmap.fromImage(image)


def _size_text(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / 2**20:.1f} MB"
    return f"{max(1, round(size / 1024))} KB"


def _picture_label(item: Attachment, box: QSize) -> QLabel:
    label = QLabel()
    pixmap = thumbnail(item.data, box)
    if pixmap.isNull():
        label.setText(item.name)
    else:
        label.setPixmap(pixmap)
    label.setToolTip(f"{item.name} · {_size_text(item.size)}")
    label.setAccessibleName(item.name)
    return label


def _file_icon() -> QLabel:
    label = QLabel()
    label.setPixmap(icon("attach").pixmap(16, 16))
    return label


class AttachmentChip(QFrame):
    """One attachment waiting to be sent: its thumbnail or name, and a remove button."""

    remove_requested = Signal(object)  # this chip

    def __init__(self, item: Attachment, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.setObjectName("AttachmentChip")
        self.setStyleSheet(
            "#AttachmentChip { border: 1px solid #9ca3af; border-radius: 6px; }"
            " #AttachmentChip QLabel { background: transparent; }"
        )
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 2, 2, 2)
        row.setSpacing(4)
        row.addWidget(_picture_label(item, CHIP_THUMB) if item.kind == "image" else _file_icon())
        self.label = QLabel(item.name)
        self.label.setToolTip(f"{item.name} · {_size_text(item.size)}")
        row.addWidget(self.label)
        self.remove_button = QToolButton()
        self.remove_button.setObjectName("Small")
        self.remove_button.setText("✕")
        self.remove_button.setToolTip(self.tr("Remove %1").replace("%1", item.name))
        self.remove_button.setAccessibleName(self.tr("Remove %1").replace("%1", item.name))
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit(self))
        row.addWidget(self.remove_button)


class AttachmentChips(QWidget):
    """The attachments of the message being written, removable; hidden while empty."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(6)
        self._row.addStretch(1)
        self.chips: list[AttachmentChip] = []
        self.setVisible(False)

    def items(self) -> list[Attachment]:
        """The attachments, in the order they were added."""
        return [chip.item for chip in self.chips]

    def add(self, item: Attachment) -> None:
        """Show ``item`` (the same file twice is shown once)."""
        if any(c.item.sha256 == item.sha256 and c.item.name == item.name for c in self.chips):
            return
        chip = AttachmentChip(item)
        chip.remove_requested.connect(self._remove)
        self._row.insertWidget(len(self.chips), chip)
        self.chips.append(chip)
        self.setVisible(True)
        self.changed.emit()

    def set_items(self, items: Sequence[Attachment]) -> None:
        """Show exactly ``items`` (e.g. the attachments of a message being edited)."""
        self.clear()
        for item in items:
            self.add(item)

    def _remove(self, chip: object) -> None:
        if isinstance(chip, AttachmentChip) and chip in self.chips:
            self.chips.remove(chip)
            self._row.removeWidget(chip)
            chip.hide()
            chip.deleteLater()
            self.setVisible(bool(self.chips))
            self.changed.emit()

    def clear(self) -> None:
        """Remove every chip (the message was sent)."""
        for chip in list(self.chips):
            self._remove(chip)


class AttachmentRow(QWidget):
    """A sent message's attachments in the transcript: thumbnails and file names."""

    def __init__(self, items: Sequence[Attachment], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 2, 0, 2)
        row.setSpacing(8)
        self.thumbnails: list[QLabel] = []
        self.files: list[QLabel] = []  # each document's name
        for item in items:
            if item.kind == "image":
                label = _picture_label(item, TRANSCRIPT_THUMB)
                self.thumbnails.append(label)
                row.addWidget(label, 0, Qt.AlignmentFlag.AlignBottom)
                continue
            box = QFrame()
            box.setObjectName("AttachedFile")
            box.setToolTip(f"{item.name} · {_size_text(item.size)}")
            box.setStyleSheet(
                "#AttachedFile { border: 1px solid #9ca3af; "
                "border-radius: 6px; } #AttachedFile QLabel "
                "{ background: transparent; border: none; }"
            )
            inner = QHBoxLayout(box)
            inner.setContentsMargins(6, 3, 8, 3)
            inner.addWidget(_file_icon())
            name = QLabel(item.name)
            inner.addWidget(name)
            self.files.append(name)
            row.addWidget(box, 0, Qt.AlignmentFlag.AlignBottom)
        row.addStretch(1)

    @classmethod
    def added_to(cls, layout: QVBoxLayout, items: Sequence[Attachment]) -> AttachmentRow | None:
        """A row for ``items`` added to ``layout``; None (nothing added) for no items."""
        if not items:
            return None
        row = cls(items)
        layout.addWidget(row)
        return row


class MessageInput(QPlainTextEdit):
    """The message box: a pasted or dropped picture or file is attached, not typed in."""

    pasted = Signal(object)  # what was pasted or dropped: a list of Paths, or a QImage

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        """Pictures and files are accepted too (to attach them)."""
        return (
            source.hasImage() or _local_files(source) != [] or super().canInsertFromMimeData(source)
        )

    def insertFromMimeData(self, source: QMimeData) -> None:
        """Attach a picture or files; insert text as usual."""
        files = _local_files(source)
        if files:
            self.pasted.emit(files)
        elif source.hasImage():
            self.pasted.emit(source.imageData())
        else:
            super().insertFromMimeData(source)


def _local_files(source: QMimeData) -> list[Path]:
    if not source.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in source.urls() if url.isLocalFile()]


def _reader(
    paths: list[Path], limits: ImageLimits
) -> Callable[[], list[Attachment | EdgeDeskError]]:
    """A blocking call: each file read as an attachment, or the error saying why not."""

    def read() -> list[Attachment | EdgeDeskError]:
        out: list[Attachment | EdgeDeskError] = []
        for path in paths:
            try:
                out.append(from_path(path, limits))
            except EdgeDeskError as exc:
                out.append(exc)
        return out

    return read


def png_bytes(image: QImage) -> bytes:
    """A pasted picture encoded as PNG (how it is kept and sent)."""
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    QImageWriter(buffer, QByteArray(b"PNG")).write(image)
    buffer.close()
    return bytes(array.data())


class Attacher(QObject):
    """Adds attachments to the chips from the Attach button, a paste, or a drop onto the
    chat, and says at once when the chat's model cannot see an attached picture.

    ``model`` gives the current chat's model; ``sees`` says whether a model takes
    pictures (None: not known, nothing is said); ``notify`` shows a sentence. Files are
    read on a worker of ``pool`` (without one, here); ``busy`` while any are.
    """

    busy_changed = Signal(bool)

    def __init__(
        self,
        chips: AttachmentChips,
        drop_target: QWidget,
        model: Callable[[], str],
        notify: Callable[[str], None],
        *,
        sees: Callable[[str], bool] | None = None,
        pool: WorkerPool | None = None,
        limits: ImageLimits = DEFAULT_LIMITS,
    ) -> None:
        super().__init__(drop_target)
        self.limits = limits  # caps on one picture: settings, forced by policy
        self.chips = chips
        self._model = model
        self._notify = notify
        self.sees = sees
        self._pool = pool
        self._reading = 0
        self._pasted = 0
        drop_target.setAcceptDrops(True)
        drop_target.installEventFilter(self)

    def choose(self, parent: QWidget) -> None:
        """Ask for files with the file dialog and attach them."""
        names, _ = QFileDialog.getOpenFileNames(
            parent,
            self.tr("Attach pictures or documents"),
            "",
            self.tr("Pictures and documents (%1);;All files (*)").replace(
                "%1", f"{PICTURES} {DOCUMENTS}"
            ),
        )
        self.attach_paths([Path(name) for name in names])

    @property
    def busy(self) -> bool:
        """Whether attached files are still being read."""
        return self._reading > 0

    def attach_paths(self, paths: Sequence[Path]) -> None:
        """Read the files at ``paths`` (on a worker) and attach them; a file that cannot
        be attached is named with the reason."""
        if not paths:
            return
        task = _reader(list(paths), self.limits)
        if self._pool is None:
            self._read("", task())
            return
        worker = TaskWorker(task, "attach")
        worker.result.connect(self._read)
        worker.failed.connect(self._failed)
        worker.done.connect(self._finished)
        self._reading += 1
        if self._reading == 1:
            self.busy_changed.emit(True)
        self._pool.start(worker)

    @Slot(str, object)
    def _read(self, _key: str, results: object) -> None:
        for result in results if isinstance(results, list) else []:
            if isinstance(result, Attachment):
                self._add(result)
            elif isinstance(result, EdgeDeskError):
                self._notify(error_text(result))

    @Slot(str, str)
    def _failed(self, _key: str, message: str) -> None:
        self._notify(message)

    @Slot()
    def _finished(self) -> None:
        self._reading -= 1
        if self._reading == 0:
            self.busy_changed.emit(False)

    def attach_image(self, image: QImage) -> bool:
        """Attach a pasted picture (as PNG); False when it is refused (said why)."""
        self._pasted += 1
        name = self.tr("pasted picture %1.png").replace("%1", str(self._pasted))
        try:
            self._add(from_bytes(name, png_bytes(image), self.limits))
        except EdgeDeskError as exc:
            self._notify(error_text(exc))
            return False
        return True

    def on_pasted(self, what: object) -> None:
        """A paste or a drop on the message box: files or a picture."""
        if isinstance(what, list):
            self.attach_paths([p for p in what if isinstance(p, Path)])
        elif isinstance(what, QImage) and not what.isNull():
            self.attach_image(what)

    def _add(self, item: Attachment) -> None:
        self.chips.add(item)
        if item.kind == "image":
            self.warn_if_blind()

    def blind_model(self) -> str | None:
        """The chat's model when pictures are attached and it cannot see them, else None."""
        model = self._model()
        if not model or self.sees is None or not any(i.kind == "image" for i in self.chips.items()):
            return None
        return None if self.sees(model) else model

    def warn_if_blind(self) -> bool:
        """Say (before sending) that the chat's model cannot see the attached pictures."""
        model = self.blind_model()
        if model is None:
            return False
        self._notify(
            self.tr(
                "%1 cannot see pictures: choose a vision model for this chat, "
                "or remove the picture before sending."
            ).replace("%1", model)
        )
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Files and pictures dragged onto the chat are attached."""
        if event.type() in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
            assert isinstance(event, QDragEnterEvent | QDropEvent)
            mime = event.mimeData()
            if _local_files(mime) or mime.hasImage():
                event.acceptProposedAction()
                return True
        elif event.type() == QEvent.Type.Drop:
            assert isinstance(event, QDropEvent)
            mime = event.mimeData()
            files = _local_files(mime)
            if files or mime.hasImage():
                self.on_pasted(files or mime.imageData())
                event.acceptProposedAction()
                return True
        return super().eventFilter(watched, event)
