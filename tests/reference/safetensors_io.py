"""Minimal, dependency-free safetensors reader/writer (numpy + optional torch).

File layout (see docs/model-format.md):
    u64 little-endian N | N bytes of JSON header | raw little-endian tensor data

Header entries are ``name: {"dtype", "shape", "data_offsets": [begin, end]}`` with offsets
relative to the start of the data block; the optional ``"__metadata__"`` entry maps
string -> string.  The writer lays tensors out contiguously in insertion order and pads the
JSON header with spaces so that the data block starts on an 8-byte boundary (the same habit
as the official implementation).  Writes are atomic (temporary file + os.replace).

The reader is strict: it checks that the offsets tile the data block exactly, in order and
without gaps or overlaps, that each byte size matches dtype and shape, and that metadata
values are strings.
"""

import json
import os
import struct
import tempfile
from collections import OrderedDict

import numpy as np

# safetensors dtype name -> little-endian numpy dtype
DTYPES = OrderedDict([
    ("F64", np.dtype("<f8")),
    ("F32", np.dtype("<f4")),
    ("F16", np.dtype("<f2")),
    ("I64", np.dtype("<i8")),
    ("I32", np.dtype("<i4")),
    ("I16", np.dtype("<i2")),
    ("I8", np.dtype("i1")),
    ("U8", np.dtype("u1")),
    ("BOOL", np.dtype("?")),
])

_NP_TO_ST = {v: k for k, v in DTYPES.items()}

METADATA_KEY = "__metadata__"
MAX_HEADER = 100 * 1024 * 1024


class SafetensorsError(ValueError):
    pass


def _to_numpy(value):
    """Accept numpy arrays, torch tensors, or nested lists/scalars."""
    try:  # torch is optional for this module
        import torch
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().contiguous().numpy()
    except ImportError:  # pragma: no cover
        pass
    return np.asarray(value)


def _dtype_name(arr, dtype=None):
    if dtype is not None:
        if dtype not in DTYPES:
            raise SafetensorsError("unsupported dtype %r" % (dtype,))
        return dtype
    key = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
    for name, dt in DTYPES.items():
        if dt == key:
            return name
    raise SafetensorsError("unsupported numpy dtype %s" % (arr.dtype,))


def serialize(tensors, metadata=None, dtypes=None):
    """Return the bytes of a safetensors file.

    tensors:  mapping name -> array-like (order is kept)
    metadata: optional mapping str -> str
    dtypes:   optional mapping name -> safetensors dtype name to cast to (e.g. "F32")
    """
    dtypes = dtypes or {}
    header = OrderedDict()
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise SafetensorsError("metadata must map str -> str (%r)" % (k,))
        header[METADATA_KEY] = OrderedDict(metadata)
    chunks = []
    offset = 0
    for name, value in tensors.items():
        if not isinstance(name, str) or name == METADATA_KEY:
            raise SafetensorsError("bad tensor name %r" % (name,))
        arr = _to_numpy(value)
        st = _dtype_name(arr, dtypes.get(name))
        data = np.ascontiguousarray(arr.astype(DTYPES[st], copy=False)).tobytes()
        header[name] = OrderedDict([
            ("dtype", st),
            ("shape", [int(s) for s in arr.shape]),
            ("data_offsets", [offset, offset + len(data)]),
        ])
        chunks.append(data)
        offset += len(data)
    hjson = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    pad = (-(8 + len(hjson))) % 8
    hjson += b" " * pad
    return struct.pack("<Q", len(hjson)) + hjson + b"".join(chunks)


def write(path, tensors, metadata=None, dtypes=None):
    """Atomically write a safetensors file (temporary file in the same directory + os.replace)."""
    blob = serialize(tensors, metadata, dtypes)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".safetensors", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return len(blob)


def deserialize(blob):
    """Parse bytes -> (OrderedDict name -> numpy array, metadata dict)."""
    if len(blob) < 8:
        raise SafetensorsError("file too short")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > MAX_HEADER or 8 + n > len(blob):
        raise SafetensorsError("bad header length %d" % n)
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"), object_pairs_hook=OrderedDict)
    except (UnicodeDecodeError, ValueError) as e:
        raise SafetensorsError("bad header JSON: %s" % e)
    if not isinstance(header, dict):
        raise SafetensorsError("header is not an object")
    data = memoryview(blob)[8 + n:]
    metadata = header.pop(METADATA_KEY, None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise SafetensorsError("__metadata__ must map str -> str")
    entries = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
    expect = 0
    tensors = OrderedDict()
    for name, info in entries:
        st = info.get("dtype")
        if st not in DTYPES:
            raise SafetensorsError("%s: unsupported dtype %r" % (name, st))
        shape = info.get("shape")
        begin, end = info.get("data_offsets", [None, None])
        if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
            raise SafetensorsError("%s: bad shape %r" % (name, shape))
        if begin != expect or end < begin or end > len(data):
            raise SafetensorsError("%s: offsets %r not contiguous (expected begin %d)"
                                   % (name, [begin, end], expect))
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if count * DTYPES[st].itemsize != end - begin:
            raise SafetensorsError("%s: byte size %d does not match %s %r"
                                   % (name, end - begin, st, shape))
        arr = np.frombuffer(data[begin:end], dtype=DTYPES[st]).reshape(shape).copy()
        tensors[name] = arr
        expect = end
    if expect != len(data):
        raise SafetensorsError("data block has %d trailing bytes" % (len(data) - expect))
    # keep header order for the caller
    ordered = OrderedDict((name, tensors[name]) for name in header.keys())
    return ordered, dict(metadata)


def read(path):
    """Read a file -> (OrderedDict name -> numpy array, metadata dict)."""
    with open(path, "rb") as f:
        return deserialize(f.read())


def read_torch(path):
    """Read a file -> (OrderedDict name -> torch tensor, metadata dict)."""
    import torch
    arrays, meta = read(path)
    return OrderedDict((k, torch.from_numpy(v)) for k, v in arrays.items()), meta


def read_header(path):
    """Return the parsed JSON header (including __metadata__) without loading the data."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n).decode("utf-8"), object_pairs_hook=OrderedDict)
