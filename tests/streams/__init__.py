"""Streams end to end: our CLI between pipes (docs/cli.md "Streams")."""
