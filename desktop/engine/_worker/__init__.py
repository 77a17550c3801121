"""Each loaded model in a worker process of its own, behind the ``Engine`` protocol.

llama.cpp ends the process on a failed assert (``GGML_ASSERT``, ``GGML_ABORT``), on a
CUDA error or when the OS kills it for memory. In a worker, that ends one model and
its open requests (each answered with ``EngineCrashed``), not the window, the server
and every other model. ``start.start_worker`` starts and loads one and hands
it over as a ``client.WorkerEngine``, the app's side (neither imports llama_cpp);
``endings`` says how a worker ended and why; ``child`` is the worker's side (``python -m
desktop.engine._worker``), ``wire`` the typed messages between them.
"""
