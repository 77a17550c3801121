"""``python -m desktop.engine._worker``: a model's worker process (see ``child``)."""

from __future__ import annotations

import logging
import os
import sys

from desktop.engine._worker.child import main

if __name__ == "__main__":
    code = main()
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)  # no interpreter teardown: llama.cpp's memory goes back to the OS whole
