"""Dilated File Transfer (transfer-v2): offers of files and directories in
both directions over a dilated wormhole. See docs/transfer-v2.md."""
