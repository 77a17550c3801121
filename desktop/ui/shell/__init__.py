"""The window's frame: main window, tray, one instance per data folder, look and fonts,
first run, following the disk, and the guards Qt and PySide need.
"""
