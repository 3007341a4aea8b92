"""Dilation (spec 000): durable, flow-controlled subchannels over a direct
encrypted connection. See docs/dilation.md for the layer map."""
