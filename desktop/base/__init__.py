"""The base every feature stands on: errors, constants, settings and paths, the
network gate, the audit log, the keychain, owner-only files, the crash log.

Nothing here knows a feature; every other package may import it. Its own order, top to
bottom: crash; net, config, audit; keychain; private, errors,
filebytes, defaults (pyproject.toml's import-linter contracts keep it).
"""
