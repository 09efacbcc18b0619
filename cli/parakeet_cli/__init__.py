"""Command-line programs of parakeet: ``parakeet-cli`` and ``parakeet-server``."""
