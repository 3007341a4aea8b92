"""Dilation: durable, flow-controlled subchannels over a direct encrypted
connection (Dilation protocol). See docs/dilation.md for the layer map."""
