"""Hostile peers written for this project, attacking our protocol layers
(issue 11): each case asserts the exact outcome and measures what it
asserts. docs/security.md lists the limits they pin."""
