"""Each loaded model in a worker process of its own, behind the ``Engine`` protocol.

llama.cpp ends the process on a failed assert (``GGML_ASSERT``, ``GGML_ABORT``), on a
CUDA error or when the OS kills it for memory. In a worker, that ends one model and
its open requests (each answered with ``EngineCrashed``), not the window, the server
and every other model. ``client.WorkerEngine`` is the app's side (it imports no
llama_cpp), ``child`` the worker's (``python -m desktop.engine._worker``), ``wire`` the
typed messages between them.
"""
