"""The composition root: the one place that builds and rewires the app.

context is AppContext (build_context); members the lazily built members that declare
what they depend on; server_handle the one handle on the local API server the context
holds; startup turns a command line into a context. The features it wires live in
their own folders: moving the data folder and switching its encryption in
``desktop.datafolder``, the clocks (idle unload, hourly maintenance, retention) in
``desktop.upkeep``.
"""
