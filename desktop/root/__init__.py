"""The composition root and its helpers: the one place that builds and rewires the app.

context is AppContext (build_context); members the lazily built members
that declare what they depend on; startup turns a command line into a context;
encryption_switch and relocate are the two changes that reopen the database;
housekeeping the clocks (idle unload, hourly maintenance, retention).
"""
