"""The Server screen: start and stop the local API, its keys and their scopes."""
