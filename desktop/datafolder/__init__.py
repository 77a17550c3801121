"""The data folder as a whole: moving it, holding it, switching its database's encryption.

``_relocate`` moves the folder (asked for while the app runs, done at the next start
before anything opens it) and holds it (``DataFolderLock``: one EdgeDesk per folder);
``_encryption_switch`` encrypts or decrypts the database in place while this process has
it open. Both change what the composition root (``desktop.root.context``) opens; it
calls them with the objects it owns. Outside this package, import these names from
here.
"""

from desktop.datafolder._encryption_switch import (
    check_passphrase,
    data_alone,
    settled_key,
    switch_open,
)
from desktop.datafolder._relocate import (
    DataFolderLock,
    PendingMove,
    ProgressFn,
    StartLocation,
    cancel_move,
    check_target,
    open_data_folder,
    pending_move,
    relocate_at_start,
    request_move,
)

__all__ = [
    "DataFolderLock",
    "PendingMove",
    "ProgressFn",
    "StartLocation",
    "cancel_move",
    "check_passphrase",
    "check_target",
    "data_alone",
    "open_data_folder",
    "pending_move",
    "relocate_at_start",
    "request_move",
    "settled_key",
    "switch_open",
]
