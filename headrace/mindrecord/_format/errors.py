"""Exceptions of the MindRecord layer.

Two families live here:

* MindSpore's own exception classes (``ParamValueError``, ``MRMInvalidSchemaError``, ...), with the
  ``[Name]: message`` text users know. Each one also derives from the built-in exception that fits
  (``ValueError``, ``TypeError`` or ``RuntimeError``), so ``except ValueError`` works too.
* ``MindRecordRuntimeError`` for failures MindSpore reports from its C++ core (laid out as a dataset
  pipeline error), and its subclass ``MindRecordFormatError`` for files that are damaged or are not
  MindRecord files at all; those name the file and, where known, the row.
"""
from __future__ import annotations

import errno as _errno

_RULE = "-" * 66
_HEADLINE = "Exception thrown from dataset pipeline. Refer to 'Dataset Pipeline Error Message'. "


class MindRecordException(Exception):
    """Base class of MindSpore's MindRecord exceptions; ``str()`` is ``[ClassName]: message``."""

    _default_message = "Unknown Error."

    def __init__(self, message: str | None = None) -> None:
        self._error_msg = self._default_message if message is None else message
        super().__init__(self._error_msg)

    def __str__(self) -> str:
        return f"[{type(self).__name__}]: {self._error_msg}"

    @property
    def error_msg(self) -> str:
        """The message without the class-name prefix."""
        return self._error_msg

    def __reduce__(self):
        return (_rebuild_mr_exception, (type(self), self._error_msg))


def _rebuild_mr_exception(cls: type, message: str) -> MindRecordException:
    exc = cls.__new__(cls)
    MindRecordException.__init__(exc, message)
    return exc


class UnknownError(MindRecordException, RuntimeError):
    pass


class ParamValueError(MindRecordException, ValueError):
    def __init__(self, error_detail: str) -> None:
        super().__init__(f"Invalid parameter value. {error_detail}")


class PathNotExistsError(MindRecordException):
    """A file or folder that is needed is missing (MindSpore's text: ``Invalid path. <what>``)."""

    def __init__(self, error_path: str) -> None:
        super().__init__(f"Invalid path. {error_path}")


class ParamTypeError(MindRecordException, TypeError):
    def __init__(self, param_name: str, expected_type: str) -> None:
        super().__init__(f"Invalid parameter type. '{param_name}' expect {expected_type} type.")


class MRMOpenError(MindRecordException, RuntimeError):
    _default_message = "MindRecord File could not open successfully."


class MRMOpenForAppendError(MindRecordException, RuntimeError):
    _default_message = "MindRecord File could not open successfully for append."


class MRMAddSchemaError(MindRecordException, RuntimeError):
    _default_message = "Failed to add schema."


class MRMAddIndexError(MindRecordException, RuntimeError):
    _default_message = "Failed to add index field."


class MRMBuildSchemaError(MindRecordException, ValueError):
    _default_message = "Failed to build schema."


class MRMGetMetaError(MindRecordException, RuntimeError):
    _default_message = "Failed to get meta info."


class MRMInvalidSchemaError(MindRecordException, ValueError):
    def __init__(self, error_detail: str) -> None:
        super().__init__(f"Schema format is error. Detail: {error_detail}")


class MRMValidateDataError(MindRecordException, ValueError):
    def __init__(self, error_detail: str) -> None:
        super().__init__(f"Raw data do not match the schema. Detail: {error_detail}")


class MRMDefineIndexError(MindRecordException, ValueError):
    def __init__(self, error_detail: str) -> None:
        super().__init__(f"Failed to define index field. Detail: {error_detail}")


class MRMUnsupportedSchemaError(MindRecordException, ValueError):
    def __init__(self, error_detail: str) -> None:
        super().__init__(f"Schema is not supported. Detail: {error_detail}")


class MRMDefineCategoryError(MindRecordException, ValueError):
    def __init__(self, error_detail: str) -> None:
        super().__init__(f"Failed to define category field. Detail: {error_detail}")


class MindRecordRuntimeError(RuntimeError):
    """A failure MindSpore reports from its C++ core, in the same layout.

    ``str(e)`` reads like MindSpore's text (headline, "Dataset Pipeline Error Message" section and
    ``[ERROR] <detail>``); ``e.detail`` is the one-line description alone.
    """

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"{_HEADLINE}\n\n{_RULE}\n- Dataset Pipeline Error Message: \n{_RULE}\n"
                         f"[ERROR] {detail}\n")

    def __reduce__(self):
        return (type(self), (self.detail,))


class MindRecordFormatError(MindRecordRuntimeError):
    """A MindRecord data file or its ``.db`` index is damaged, truncated or not MindRecord at all.

    Attributes:
        file: the file at fault.
        row: the row (within that file) being read, when the failure concerns one row.
    """

    def __init__(self, detail: str, file: str | None = None, row: int | None = None) -> None:
        self.file = file
        self.row = row
        where = []
        if file is not None:
            where.append(f"file: {file}")
        if row is not None:
            where.append(f"row: {row}")
        self.plain = detail
        super().__init__(f"{detail} ({', '.join(where)})" if where else detail)

    def __reduce__(self):
        return (type(self), (self.plain, self.file, self.row))


class MindRecordWriteError(MindRecordRuntimeError, OSError):
    """Writing MindRecord files failed in the operating system or SQLite (disk full, I/O error...).

    Also an ``OSError`` (``errno`` as the system gave it; ENOSPC for SQLite's "database or disk is
    full"), so ``except OSError`` keeps working. ``filename`` is the MindRecord file (data file or
    ``.db``) being written, ``temp`` the temporary file the bytes were going to, if any.
    """

    def __init__(self, detail: str, file: str, temp: str | None = None, errno: int | None = None,
                 strerror: str | None = None) -> None:
        MindRecordRuntimeError.__init__(self, detail)
        self.errno, self.strerror, self.filename = errno, strerror, file
        self.file, self.temp = file, temp

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self):
        return (type(self), (self.detail, self.file, self.temp, self.errno, self.strerror))


def write_error(target: str, temp: str | None, exc: BaseException) -> MindRecordWriteError:
    """A ``MindRecordWriteError`` for an ``OSError`` or ``sqlite3.Error`` met while writing ``target``."""
    if isinstance(exc, OSError):
        num, why = exc.errno, exc.strerror or str(exc)
    else:  # sqlite3.Error: SQLITE_FULL (13) is "database or disk is full"
        num, why = (_errno.ENOSPC if getattr(exc, "sqlite_errorcode", None) == 13 else None), str(exc)
    code = f" [{_errno.errorcode.get(num, num)}]" if num is not None else ""
    via = f" (temporary file {temp})" if temp else ""
    return MindRecordWriteError(f"Failed to write mindrecord file {target}{via}: {why}{code}. The FileWriter was "
                                f"closed and its temporary files removed.", target, temp, num, why)


REINDEX_HINT = ("If the data file is intact, rebuild its index with `headrace mindrecord reindex {path}` "
                "or headrace.mindrecord.reindex({path!r}).")
