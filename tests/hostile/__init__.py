"""Hostile peers written for this project, attacking our protocol layers
(docs/security.md, "The hostile tests (`tests/hostile/`)"): each case
asserts the exact outcome and measures what it asserts. docs/security.md
lists the limits they pin."""
