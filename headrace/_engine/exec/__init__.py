"""Worker pools that keep input order."""
