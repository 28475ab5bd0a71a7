"""MindRecord encryption settings (``mindspore.mindrecord.config``).

With a key set, ``FileWriter.commit`` (and ``Dataset.save``) encrypt every data file and ``.db``
they write, and ``FileReader``, ``MindPage``, ``MindDataset`` and ``FileWriter.open_for_append``
decrypt them; files are the same as MindSpore 2.10's in both directions. AES-GCM authenticates
every 64 MiB block, so a wrong key or a changed byte is an error naming the file.
"""
from __future__ import annotations

from ._format import crypto

__all__ = ["set_dec_mode", "set_enc_key", "set_enc_mode"]


def set_enc_key(enc_key):
    """Sets the key that encrypts written MindRecord files and decrypts read ones.

    Args:
        enc_key (str): 16, 24 or 32 ASCII characters (AES-128, AES-192 or AES-256), or ``None``
            to disable encryption (the default state).

    Raises:
        ValueError: ``enc_key`` is not a str or None, or has another length.

    Examples:
        >>> from headrace.mindrecord import set_enc_key
        >>> set_enc_key("0123456789012345")
        >>> set_enc_key(None)
    """
    crypto.set_enc_key(enc_key)


def set_enc_mode(enc_mode="AES-GCM"):
    """Sets how files are encrypted when a key is set.

    Args:
        enc_mode (Union[str, Callable], optional): ``"AES-GCM"``, the only built-in mode of
            MindSpore 2.10, or a function ``enc_mode(f_in, file_size, f_out, key)`` that reads the
            plain file ``f_in`` (``file_size`` bytes) and writes its encrypted form to ``f_out``;
            ``BE32(0)``, ``"UDF-ENC"`` and ``"ENCRYPT"`` are appended after it. Default: ``"AES-GCM"``.

    Raises:
        ValueError: ``enc_mode`` is neither a supported mode nor callable.

    Examples:
        >>> from headrace.mindrecord import set_enc_mode
        >>> set_enc_mode("AES-GCM")
    """
    crypto.set_enc_mode(enc_mode)


def set_dec_mode(dec_mode="AES-GCM"):
    """Sets how files are decrypted; ``None`` means the encryption mode.

    Args:
        dec_mode (Union[str, Callable, None], optional): ``"AES-GCM"``, ``None``, or a function
            ``dec_mode(f_in, file_size, f_out, key)`` that reads an encrypted file ``f_in``
            (``file_size`` bytes: all but the final ``"ENCRYPT"``) and writes the plain file to
            ``f_out``; needed when ``set_enc_mode`` was given a function. Default: ``"AES-GCM"``.

    Raises:
        ValueError: ``dec_mode`` is neither a supported mode, None nor callable.

    Examples:
        >>> from headrace.mindrecord import set_dec_mode
        >>> set_dec_mode("AES-GCM")
        >>> set_dec_mode(None)
    """
    crypto.set_dec_mode(dec_mode)
