"""The app's clocks: idle models unloaded on their keep-alive, hourly maintenance (the
retention periods, usage roll-up, document rescans), retention applied as a store opens.

``Housekeeping`` knows nothing of Qt, the scheduler or the stores: the composition root
(``desktop.root.context``) builds it with a ``reap`` and a ``maintain`` function, and the
window or ``edgedesk serve`` starts it. Outside this package, import these names from
here.
"""

from desktop.upkeep._housekeeping import (
    Housekeeping,
    MaintenanceReport,
    maintain,
    retained_at_open,
)

__all__ = ["Housekeeping", "MaintenanceReport", "maintain", "retained_at_open"]
