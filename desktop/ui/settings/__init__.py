"""Settings: data location, encryption at rest, key backup, passphrase, hardware."""
