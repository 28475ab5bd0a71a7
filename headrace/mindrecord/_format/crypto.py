"""Encrypted MindRecord files, laid out as MindSpore 2.10 writes them.

An encrypted file (data file or ``.db``) is the plain file cut into 64 MiB pieces, each stored as
``BE32(n)`` + ``n`` bytes of sealed block, then ``BE32(0)``, the 7-byte mode name (``AES-GCM``, or
``UDF-ENC`` for a user function) and the 7 bytes ``ENCRYPT``. A sealed AES-GCM block is, with
little-endian lengths: the magic ``0x7F3A5ED8``, the 16-byte GCM tag, the length of what follows,
``16``, a 16-byte random IV (GCM uses its first 12 bytes as the nonce), the ciphertext length and
the ciphertext. The tag is the integrity check: a wrong key or a changed byte fails it.

Readers work on a decrypted copy in ``.decrypt_mindrecord/<random>/`` next to the file (folders
0700, files 0600; the system's temporary folder when the file's folder is read-only). The copy is
removed when the reader is closed or collected, or at exit; ``.decrypt_mindrecord`` itself stays,
as MindSpore leaves it.
"""
from __future__ import annotations

import atexit
import os
import shutil
import stat
import struct
import tempfile
import threading
import weakref
from typing import Any, Callable, Sequence, Union

from headrace._util.forksafe import fork_safe

__all__ = ["DecryptedCopies", "check_on_open", "decrypt_to", "encrypt_in_place", "get_dec_mode", "get_enc_key", "get_enc_mode",
           "needs_decrypt", "set_dec_mode", "set_enc_key", "set_enc_mode"]

MODES = ("AES-GCM",)
END_FLAG = b"ENCRYPT"
MODE_LEN = 7
UDF_MODE = b"UDF-ENC"
BLOCK = 64 * 1024 * 1024
GCM_MAGIC = 0x7F3A5ED8
_IV_LEN = 16
_TAG_LEN = 16
DECRYPT_DIR = ".decrypt_mindrecord"
WRONG_KEY = "Failed to decrypt data, please check if enc_key and enc_mode / dec_mode is valid."
IS_ENCRYPTED = ("The mindrecord file is encrypted. You need to configure "
                "'mindspore.mindrecord.config.set_enc_key(...)' and "
                "'mindspore.mindrecord.config.set_enc_mode(...)' for decryption.")
NOT_ENCRYPTED = ("The mindrecord file is not encrypted. You can set "
                 "'mindspore.mindrecord.config.set_enc_key(None)' to disable the decryption.")

_state: dict[str, Any] = {"key": None, "enc": "AES-GCM", "dec": None}


# ---------------------------------------------------------------- settings

def set_enc_key(enc_key: str | None) -> None:
    if enc_key is None:
        _state["key"] = None
        return
    if not isinstance(enc_key, str):
        raise ValueError(f"The input enc_key is not str: got {type(enc_key).__name__}. enc_key must be a str of "
                         f"length 16, 24 or 32, or None to disable encryption.")
    if len(enc_key) not in (16, 24, 32) or len(enc_key.encode("utf-8")) != len(enc_key):
        raise ValueError(f"The length of input enc_key is not 16, 24, 32: got {len(enc_key)} characters. enc_key "
                         f"must be 16, 24 or 32 ASCII characters (AES-128, AES-192, AES-256).")
    _state["key"] = enc_key


Mode = Union[str, Callable[..., Any]]  # a MODES name, or a user function (src, size, dst, key)


def _check_mode(value: Any, name: str) -> Mode:
    if callable(value):
        return value
    if not isinstance(value, str):
        raise ValueError(f"The input {name} is not str: got {type(value).__name__}. {name} must be one of "
                         f"{list(MODES)} or a callable.")
    if value not in MODES:
        raise ValueError(f"The input {name} is invalid: {value!r}. {name} must be one of {list(MODES)} or a "
                         f"callable.")
    return value


def set_enc_mode(enc_mode: Mode = "AES-GCM") -> None:
    _state["enc"] = _check_mode(enc_mode, "enc_mode")


def set_dec_mode(dec_mode: Mode | None = "AES-GCM") -> None:
    _state["dec"] = None if dec_mode is None else _check_mode(dec_mode, "dec_mode")


def get_enc_key() -> str | None:
    return _state["key"]


def get_enc_mode() -> Mode:
    return _state["enc"]


def get_dec_mode() -> Mode:
    """The decryption mode: ``set_dec_mode``'s, else the encryption mode."""
    return _state["enc"] if _state["dec"] is None else _state["dec"]


def _mode_tag(mode: Mode) -> bytes:
    """The 7 bytes naming ``mode`` in a file's trailer."""
    if callable(mode):
        return UDF_MODE
    return mode.encode("ascii")


# ---------------------------------------------------------------- blocks

def _aead(key: str) -> Any:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415 - only with encryption
    return AESGCM(key.encode("ascii"))


def _need_key(key: str | None, path: str) -> str:
    if key is None:  # callers check first; this keeps the invariant visible
        raise RuntimeError(f"No encryption key is set (set_enc_key). File: {path}")
    return key


def seal_block(aead: Any, plain: bytes) -> bytes:
    """One sealed AES-GCM block (without its big-endian length prefix)."""
    iv = os.urandom(_IV_LEN)
    sealed = aead.encrypt(iv[:12], plain, None)
    cipher, tag = sealed[:-_TAG_LEN], sealed[-_TAG_LEN:]
    rest = struct.pack("<I", _IV_LEN) + iv + struct.pack("<I", len(cipher))
    return struct.pack("<I", GCM_MAGIC) + tag + struct.pack("<I", len(rest) + len(cipher)) + rest + cipher


def open_block(aead: Any, block: bytes, where: str) -> bytes:
    """The plain bytes of one sealed block; ``where`` names file and offset in errors."""
    from cryptography.exceptions import InvalidTag  # noqa: PLC0415

    if len(block) < 32 or struct.unpack_from("<I", block, 0)[0] != GCM_MAGIC:
        raise RuntimeError(f"{WRONG_KEY} The block at {where} is not an AES-GCM block of MindRecord "
                           f"encryption (bad magic number or too short): the file is damaged or was "
                           f"encrypted another way.")
    tag = block[4:20]
    rest_len, iv_len = struct.unpack_from("<II", block, 20)
    if rest_len != len(block) - 24 or iv_len != _IV_LEN or 32 + iv_len > len(block):
        raise RuntimeError(f"{WRONG_KEY} The block at {where} has inconsistent lengths: the file is damaged.")
    iv = block[28:28 + iv_len]
    (cipher_len,) = struct.unpack_from("<I", block, 28 + iv_len)
    cipher = block[32 + iv_len:]
    if cipher_len != len(cipher):
        raise RuntimeError(f"{WRONG_KEY} The block at {where} has inconsistent lengths: the file is damaged.")
    try:
        return aead.decrypt(iv[:12], cipher + tag, None)
    except InvalidTag:
        raise RuntimeError(f"{WRONG_KEY} The block at {where} fails its integrity check: the key is not the one "
                           f"the file was encrypted with, or the file was changed.") from None


# ---------------------------------------------------------------- files

def encrypt_in_place(path: str, key: str | None = None, mode: Mode | None = None) -> None:
    """Replaces ``path`` by its encrypted form (0600), with the current key and mode by default."""
    key = get_enc_key() if key is None else key
    mode = get_enc_mode() if mode is None else mode
    tmp = path + ".encrypt"
    size = os.path.getsize(path)
    try:
        with open(path, "rb") as src, open(tmp, "wb") as dst:
            if callable(mode):
                mode(src, size, dst, key)
            else:
                aead = _aead(_need_key(key, path))
                while True:
                    plain = src.read(BLOCK)
                    if not plain:
                        break
                    sealed = seal_block(aead, plain)
                    dst.write(struct.pack(">i", len(sealed)))
                    dst.write(sealed)
            dst.write(struct.pack(">i", 0) + _mode_tag(mode) + END_FLAG)
        os.chmod(tmp, stat.S_IRUSR | stat.S_IWUSR)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _trailer(path: str) -> tuple[bool, bytes]:
    """(ends with ``ENCRYPT``, the 7-byte mode before it)."""
    size = os.path.getsize(path)
    if size < len(END_FLAG) + MODE_LEN:
        return False, b""
    with open(path, "rb") as f:
        f.seek(size - len(END_FLAG) - MODE_LEN)
        tail = f.read(len(END_FLAG) + MODE_LEN)
    return tail[MODE_LEN:] == END_FLAG, tail[:MODE_LEN]


MIN_FILE_SIZE = 8


def check_on_open(path: str) -> None:
    """What MindSpore checks of each data file and ``.db`` when a dataset is made: a size of at
    least 8 bytes and an encryption trailer that agrees with the key setting (``needs_decrypt``)."""
    size = os.path.getsize(path)
    if size < MIN_FILE_SIZE:
        raise RuntimeError(f"Invalid file, the size of mindrecord file: {size} is smaller than the lower limit: "
                           f"{MIN_FILE_SIZE}.\n Please check file path: {path} and use 'FileWriter' to generate "
                           f"valid mindrecord files.")
    needs_decrypt(path)


def needs_decrypt(path: str) -> bool:
    """Whether ``path`` is to be decrypted; raises if the key setting and the file disagree."""
    encrypted, _ = _trailer(path)
    if get_enc_key() is not None:
        if not encrypted:
            raise RuntimeError(f"{NOT_ENCRYPTED} File: {path}")
        return True
    if encrypted:
        raise RuntimeError(f"{IS_ENCRYPTED} File: {path}")
    return False


def decrypt_to(path: str, out_path: str) -> None:
    """Writes the plain content of the encrypted ``path`` to ``out_path`` (0600)."""
    key, mode = get_enc_key(), get_dec_mode()
    if callable(get_enc_mode()) and _state["dec"] is None:
        raise RuntimeError(f"You use custom encryption, so you must also define custom decryption "
                           f"(set_dec_mode(callable)). File: {path}")
    _, file_mode = _trailer(path)
    if file_mode != _mode_tag(mode):
        raise RuntimeError(f"{WRONG_KEY} File: {path} was encrypted with mode {file_mode.decode('latin-1')!r}, "
                           f"the decryption mode is {'a callable' if callable(mode) else repr(mode)}.")
    total = os.path.getsize(path) - len(END_FLAG)
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
        if callable(mode):
            mode(src, total, dst, key)
            return
        aead, offset, end = _aead(_need_key(key, path)), 0, total - 4 - MODE_LEN
        while True:
            head = src.read(4)
            if len(head) != 4:
                raise RuntimeError(f"{WRONG_KEY} File: {path} is truncated at offset {offset}.")
            (n,) = struct.unpack(">i", head)
            if n == 0:
                if offset != end:
                    raise RuntimeError(f"{WRONG_KEY} File: {path} has an end marker at offset {offset}, before "
                                       f"its end ({end}): the file is damaged.")
                return
            if n < 0 or offset + 4 + n > end:
                raise RuntimeError(f"{WRONG_KEY} File: {path} has an invalid block length {n} at offset {offset}.")
            block = src.read(n)
            dst.write(open_block(aead, block, f"offset {offset} of {path}"))
            offset += 4 + n


_live: set[str] = set()
_live_lock = fork_safe(threading.Lock())


def _private_dir(parent: str) -> str:
    root = os.path.join(parent, DECRYPT_DIR)
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
    except OSError:          # a read-only dataset folder: decrypt into the temporary folder instead
        root = os.path.join(tempfile.gettempdir(), DECRYPT_DIR)
        os.makedirs(root, mode=0o700, exist_ok=True)
    os.chmod(root, stat.S_IRWXU)
    return tempfile.mkdtemp(dir=root)


def _remove(dirs: Sequence[str], pid: int) -> None:
    if os.getpid() != pid:       # a forked or unpickled copy never removes its parent's files
        return
    for d in dirs:
        with _live_lock:
            _live.discard(d)
        shutil.rmtree(d, ignore_errors=True)   # the private root folder stays, as MindSpore's does


@atexit.register
def _remove_all() -> None:
    with _live_lock:
        dirs = list(_live)
    _remove(dirs, os.getpid())


class DecryptedCopies:
    """Plain copies of the encrypted files among ``files`` (their ``.db`` too); ``paths`` is
    ``files`` with each encrypted file replaced by its copy. The copies are removed by ``release()``,
    when this object is collected, or at exit, in the process that made them."""

    def __init__(self, files: Sequence[str]) -> None:
        self.paths = list(files)
        self._dirs: list[str] = []
        self._finalizer = None
        try:
            for i, f in enumerate(files):
                if not needs_decrypt(f):
                    continue
                d = _private_dir(os.path.dirname(os.path.realpath(f)))
                self._dirs.append(d)
                with _live_lock:
                    _live.add(d)
                if self._finalizer is None:
                    self._finalizer = weakref.finalize(self, _remove, self._dirs, os.getpid())
                out = os.path.join(d, os.path.basename(f))
                decrypt_to(f, out)
                if os.path.exists(f + ".db"):
                    needs_decrypt(f + ".db")
                    decrypt_to(f + ".db", out + ".db")
                self.paths[i] = out
        except BaseException:
            self.release()
            raise

    @property
    def any(self) -> bool:
        return bool(self._dirs)

    def release(self) -> None:
        if self._finalizer is not None:
            self._finalizer()

    def __getstate__(self) -> dict:
        return {"paths": self.paths, "_dirs": [], "_finalizer": None}

    def __copy__(self) -> "DecryptedCopies":    # copies of a reader share (and keep alive) the files
        return self

    def __deepcopy__(self, memo: dict) -> "DecryptedCopies":
        return self
