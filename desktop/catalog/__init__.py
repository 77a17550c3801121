"""Which models exist, what they need, and how they fit this machine."""
