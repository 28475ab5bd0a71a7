"""JSON codec for values crossing between headrace (NumPy 2) and the MindSpore oracle (NumPy 1).

Arrays travel as dtype string, shape and base64 bytes, so neither side unpickles the other's
NumPy. Imported by the oracle subprocess too: keep it free of headrace imports.
"""
import base64
import json

import numpy as np


def _enc(v):
    if isinstance(v, np.ndarray):
        if v.dtype == object:
            return {"__obj__": [_enc(x) for x in v.ravel().tolist()], "shape": list(v.shape)}
        return {"__nd__": v.dtype.str, "shape": list(v.shape),
                "b64": base64.b64encode(np.ascontiguousarray(v).tobytes()).decode("ascii")}
    if isinstance(v, np.generic):
        return _enc(np.asarray(v))
    if isinstance(v, bytes):
        return {"__bytes__": base64.b64encode(v).decode("ascii")}
    if isinstance(v, tuple):
        return {"__tuple__": [_enc(x) for x in v]}
    if isinstance(v, list):
        return [_enc(x) for x in v]
    if isinstance(v, dict):
        return {"__dict__": [[_enc(k), _enc(x)] for k, x in v.items()]}
    if isinstance(v, BaseException):
        return {"__exc__": type(v).__name__, "msg": str(v)}
    if hasattr(v, "asnumpy"):
        return _enc(v.asnumpy())
    return v


def _dec(v):
    if isinstance(v, list):
        return [_dec(x) for x in v]
    if isinstance(v, dict):
        if "__nd__" in v:
            buf = base64.b64decode(v["b64"])
            return np.frombuffer(buf, dtype=np.dtype(v["__nd__"])).reshape(v["shape"]).copy()
        if "__obj__" in v:
            out = np.empty(len(v["__obj__"]), dtype=object)
            out[:] = [_dec(x) for x in v["__obj__"]]
            return out.reshape(v["shape"])
        if "__bytes__" in v:
            return base64.b64decode(v["__bytes__"])
        if "__tuple__" in v:
            return tuple(_dec(x) for x in v["__tuple__"])
        if "__dict__" in v:
            return {_dec(k): _dec(x) for k, x in v["__dict__"]}
        if "__exc__" in v:
            return OracleException(v["__exc__"], v["msg"])
    return v


class OracleException:
    """An exception raised in the oracle, returned as a value: its type name and message."""

    def __init__(self, type_name, msg):
        self.type_name, self.msg = type_name, msg

    def __repr__(self):
        return f"OracleException({self.type_name}: {self.msg[:200]!r})"


def dumps(v):
    return json.dumps(_enc(v))


def loads(s):
    return _dec(json.loads(s))
