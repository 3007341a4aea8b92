"""Magic Wormhole: get things from one computer to another, safely.

The public API is spec 004 chapter 5 ("The Magic-Wormhole API").
"""
