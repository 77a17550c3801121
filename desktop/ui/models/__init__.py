"""The Models screen: catalog and fit, details, downloads, hub search, bench chart."""
