"""Whether a folder's documents are in a language the collection's embedding model does
not know: Chinese (CJK) text in the names or the first text files, against a catalog
model trained for English only. Pure Python; reads a bounded amount from disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from desktop.catalog import Catalog

MULTILINGUAL_MODEL = "bge-m3"  # the catalog's multilingual embedding model
NAMES_SCANNED = 400  # file and folder names looked at, at most
FILES_READ = 12  # text files whose beginning is read, at most
BYTES_READ = 4096  # of each
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".html", ".htm", ".csv", ".json", ".rst"})


def has_cjk(text: str) -> bool:
    """Whether ``text`` has Chinese, Japanese or Korean characters (ideographs, kana,
    hangul)."""
    for char in text:
        code = ord(char)
        if (
            0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
            or 0x3400 <= code <= 0x4DBF  # extension A
            or 0x3040 <= code <= 0x30FF  # hiragana, katakana
            or 0xAC00 <= code <= 0xD7AF  # hangul syllables
            or 0xF900 <= code <= 0xFAFF  # compatibility ideographs
        ):
            return True
    return False


def _walk(paths: Sequence[Path]) -> Iterable[Path]:
    """The given paths, then what is under the folders among them, breadth first."""
    queue = list(paths)
    while queue:
        path = queue.pop(0)
        yield path
        if path.is_dir():
            try:
                with os.scandir(path) as entries:
                    queue.extend(Path(e.path) for e in sorted(entries, key=lambda e: e.name))
            except OSError:
                continue  # unreadable: the indexer says so; no hint from it


def folder_has_cjk(paths: Sequence[Path]) -> bool:
    """Whether the names, or the beginning of the first text files, under ``paths`` have
    CJK text (a bounded look: the first names and files met)."""
    read = 0
    for number, path in enumerate(_walk(paths)):
        if number >= NAMES_SCANNED:
            return False
        if has_cjk(path.name):
            return True
        if read < FILES_READ and path.suffix.lower() in TEXT_SUFFIXES and path.is_file():
            read += 1
            try:
                with path.open("rb") as handle:
                    head = handle.read(BYTES_READ)
            except OSError:
                continue
            if has_cjk(head.decode("utf-8", errors="ignore")):
                return True
    return False


def lacks_chinese(catalog: Catalog, model: str) -> bool:
    """Whether catalog model ``model`` was trained for stated languages without Chinese
    (False for a model outside the catalog or a multilingual one: nothing is known)."""
    entry = catalog.find(model)
    return entry is not None and bool(entry.languages) and "zh" not in entry.languages
