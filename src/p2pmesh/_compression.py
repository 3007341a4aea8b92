"""The compression methods of a transmission (P2P-D3.3), each decoded
with a bound so a compression bomb is refused, never inflated."""

import bz2
import gzip
import io
import zlib

NONE, BZ2, GZIP, LZMA, ZLIB, SNAPPY = 0, 1, 2, 3, 4, 5
NAMES = {NONE: "none", BZ2: "bz2", GZIP: "gzip", LZMA: "lzma",
         ZLIB: "zlib", SNAPPY: "snappy"}
# P2P-D0: the local order in which a sender picks an agreed method
LOCAL_ORDER = (ZLIB, SNAPPY, GZIP, BZ2, LZMA)


class CompressionError(ValueError):
    """Undecodable, or decoding past the maximum (a bomb): close (P2P-D3.3)."""


def _bounded(decompressor, data, max_length):
    out = decompressor.decompress(data, max_length + 1)
    if len(out) > max_length:
        raise CompressionError("decompressed body over the maximum")
    if not decompressor.eof:
        raise CompressionError("truncated compressed body")
    if decompressor.unused_data:
        raise CompressionError("bytes after the compressed body")
    return out


def _zlib_decode(data, max_length, wbits):
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(data, max_length + 1)
    except zlib.error as e:
        raise CompressionError(str(e)) from None
    if len(out) > max_length:
        raise CompressionError("decompressed body over the maximum")
    if not d.eof or d.unused_data:
        raise CompressionError("not exactly one compressed stream")
    return out


def _gzip_encode(data):
    # P2P-D3.3: RFC 1952, mtime=0, one member
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def _bz2_decode(data, max_length):
    try:
        return _bounded(bz2.BZ2Decompressor(), data, max_length)
    except OSError as e:
        raise CompressionError(str(e)) from None


def _lzma_codec():
    # P2P-D3.3: lzma needs CPython built with liblzma, probed at call time
    # (no import-time side effects)
    try:
        import lzma
    except ImportError:
        return None
    return lzma


def _lzma_decode(data, max_length):
    lzma = _lzma_codec()
    try:
        return _bounded(lzma.LZMADecompressor(format=lzma.FORMAT_XZ),
                        data, max_length)
    except lzma.LZMAError as e:
        raise CompressionError(str(e)) from None


def _lzma_encode(data):
    lzma = _lzma_codec()
    return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64)


def _snappy():
    try:
        import cramjam
    except ImportError:
        return None
    return cramjam.snappy


def _snappy_encode(data):
    return bytes(_snappy().compress_raw(data))


def _snappy_decode(data, max_length):
    snappy = _snappy()
    try:
        # P2P-D3.3: the announced length first, refused before inflating
        if snappy.decompress_raw_len(data) > max_length:
            raise CompressionError("decompressed body over the maximum")
        return bytes(snappy.decompress_raw(data))
    except CompressionError:
        raise
    except Exception as e:  # cramjam raises its own DecompressionError
        raise CompressionError(str(e)) from None


_ENCODERS = {
    BZ2: lambda data: bz2.compress(data, 9),
    GZIP: _gzip_encode,
    LZMA: _lzma_encode,
    ZLIB: zlib.compress,
    SNAPPY: _snappy_encode,
}
_DECODERS = {
    BZ2: _bz2_decode,
    GZIP: lambda data, m: _zlib_decode(data, m, 16 + zlib.MAX_WBITS),
    LZMA: _lzma_decode,
    ZLIB: lambda data, m: _zlib_decode(data, m, zlib.MAX_WBITS),
    SNAPPY: _snappy_decode,
}


def available():
    """The methods this process can encode and decode, in local order."""
    usable = {ZLIB, GZIP, BZ2}
    if _lzma_codec() is not None:
        usable.add(LZMA)
    if _snappy() is not None:
        usable.add(SNAPPY)
    return tuple(m for m in LOCAL_ORDER if m in usable)


def compress(method, data):
    if method == NONE:
        return data
    return _ENCODERS[method](data)


def decompress(method, data, max_length):
    if method == NONE:
        if len(data) > max_length:
            raise CompressionError("body over the maximum")
        return data
    return _DECODERS[method](data, max_length)
