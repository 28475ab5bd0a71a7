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
from typing import Any

_RULE = "-" * 66
_HEADLINE = "Exception thrown from dataset pipeline. Refer to 'Dataset Pipeline Error Message'. "


# MindSpore's exception numbers and short descriptions, by class name (its ``EXCEPTIONS`` table):
# 0-5 parameters and paths, 1xx file operations, 2xx schema and data.
EXCEPTIONS = {
    "UnknownError": [0, "Unknown Error."],
    "ParamTypeError": [1, "Param type is error."],
    "ParamValueError": [2, "Param value is error."],
    "ParamMissError": [3, "Param missing."],
    "PathNotExistsError": [4, "Path does not exist."],
    "DbConnectionError": [5, "Db connection is error."],
    "MRMOpenError": [100, "MindRecord could not open."],
    "MRMOpenForAppendError": [101, "MindRecord could not open for append."],
    "MRMInvalidPageSizeError": [102, "Failed to set page size."],
    "MRMInvalidHeaderSizeError": [103, "Failed to set header size."],
    "MRMSetHeaderError": [104, "Failed to set header."],
    "MRMWriteDatasetError": [105, "Failed to write dataset."],
    "MRMCommitError": [107, "Failed to commit."],
    "MRMLaunchError": [108, "Failed to launch."],
    "MRMFinishError": [109, "Failed to finish."],
    "MRMCloseError": [110, "Failed to close."],
    "MRMAddSchemaError": [111, "Failed to add schema."],
    "MRMAddIndexError": [112, "Failed to add index field."],
    "MRMBuildSchemaError": [113, "Failed to build schema."],
    "MRMGetMetaError": [114, "Failed to get meta info."],
    "MRMIndexGeneratorError": [115, "Failed to create index generator."],
    "MRMGenerateIndexError": [116, "Failed to generate index."],
    "MRMInitSegmentError": [117, "Failed to initialize segment."],
    "MRMFetchCandidateFieldsError": [118, "Failed to fetch candidate category fields."],
    "MRMReadCategoryInfoError": [119, "Failed to read category information."],
    "MRMFetchDataError": [120, "Failed to fetch data by category."],
    "MRMInvalidSchemaError": [200, "Schema is error."],
    "MRMValidateDataError": [201, "Raw data is valid."],
    "MRMDefineIndexError": [202, "Index field is error."],
    "MRMDefineBlobError": [203, "Blob field is error."],
    "MRMUnsupportedSchemaError": [204, "Schema is not supported."],
    "MRMDefineCategoryError": [205, "Category field is error."],
}

SYS_ID = 42


class _CodeEnum:
    """A namespace of int constants, as MindSpore's ``BaseEnum`` classes are."""


class ErrorCodeType(_CodeEnum):
    ERROR_CODE = 1
    EXCEPTION_CODE = 2


class ErrorLevel(_CodeEnum):
    COMMON_LEVEL = 0
    SUGGESTION_LEVEL = 1
    MINOR_LEVEL = 2
    MAJOR_LEVEL = 3
    CRITICAL_LEVEL = 4


class LogRuntime(_CodeEnum):
    RT_HOST = 1
    RT_DEVICE = 2


class MindRecordException(Exception):
    """Base class of MindSpore's MindRecord exceptions; ``str()`` is ``[ClassName]: message``.

    ``error_code`` is MindSpore's number for the class: host runtime, error-code type, common level,
    ``SYS_ID``, a module id (hundreds of the exception number, plus one) and the exception number,
    packed into bit fields.
    """

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

    @error_msg.setter
    def error_msg(self, msg: str) -> None:
        self._error_msg = msg

    @property
    def error_code(self) -> int:
        """MindSpore's unique error number of this exception class."""
        number = EXCEPTIONS.get(type(self).__name__, EXCEPTIONS["UnknownError"])[0]
        return self.transform_error_code(int(number))  # type: ignore[call-overload]

    @staticmethod
    def transform_error_code(exception_no: int) -> int:
        """The packed error code of MindSpore's exception number ``exception_no``."""
        module = exception_no // 100 + 1
        return ((LogRuntime.RT_HOST << 30) | (ErrorCodeType.ERROR_CODE << 28) | (ErrorLevel.COMMON_LEVEL << 25)
                | ((0xFF & SYS_ID) << 17) | ((0xFF & module) << 12) | (0x0FFF & exception_no))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild_mr_exception, (type(self), self._error_msg))


def _rebuild_mr_exception(cls: type[MindRecordException], message: str) -> MindRecordException:
    exc = cls.__new__(cls)
    MindRecordException.__init__(exc, message)
    return exc


class _DetailError(MindRecordException):
    """MindSpore's exceptions made from one ``error_detail``: the message is ``_prefix`` + the detail."""

    _prefix = ""

    def __init__(self, error_detail: str) -> None:
        super().__init__(f"{self._prefix}{error_detail}")


class UnknownError(MindRecordException, RuntimeError):
    pass


class ParamValueError(_DetailError, ValueError):
    _prefix = "Invalid parameter value. "


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


class MRMInvalidSchemaError(_DetailError, ValueError):
    _prefix = "Schema format is error. Detail: "


class MRMValidateDataError(_DetailError, ValueError):
    _prefix = "Raw data do not match the schema. Detail: "


class MRMDefineIndexError(_DetailError, ValueError):
    _prefix = "Failed to define index field. Detail: "


class MRMUnsupportedSchemaError(_DetailError, ValueError):
    _prefix = "Schema is not supported. Detail: "


class MRMDefineCategoryError(_DetailError, ValueError):
    _prefix = "Failed to define category field. Detail: "


class ParamMissError(MindRecordException, ValueError):
    def __init__(self, param_name: str) -> None:
        super().__init__(f"Param missing. '{param_name}' is required.")


class DbConnectionError(_DetailError, RuntimeError):
    _prefix = "Db connection is error. Detail: "


class MRMDefineBlobError(_DetailError, ValueError):
    _prefix = "Failed to define blob field. Detail: "


def _simple(name: str, message: str, base: type = RuntimeError) -> type:
    return type(name, (MindRecordException, base), {"_default_message": message, "__module__": __name__,
                                                   "__doc__": f"MindSpore's ``{name}``: {message}"})


# MindSpore's argument-free exceptions that headrace's own code does not raise itself; they exist
# so that code catching or raising them by name runs unchanged.
MRMInvalidPageSizeError = _simple("MRMInvalidPageSizeError", "Failed to set page size.", ValueError)
MRMInvalidHeaderSizeError = _simple("MRMInvalidHeaderSizeError", "Failed to set header size.", ValueError)
MRMSetHeaderError = _simple("MRMSetHeaderError", "Failed to set header.")
MRMWriteDatasetError = _simple("MRMWriteDatasetError", "Failed to write dataset.")
MRMCommitError = _simple("MRMCommitError", "Failed to commit.")
MRMLaunchError = _simple("MRMLaunchError", "Failed to launch.")
MRMFinishError = _simple("MRMFinishError", "Failed to finish.")
MRMCloseError = _simple("MRMCloseError", "Failed to close.")
MRMIndexGeneratorError = _simple("MRMIndexGeneratorError", "Failed to create index generator.")
MRMGenerateIndexError = _simple("MRMGenerateIndexError", "Failed to generate index.")
MRMInitSegmentError = _simple("MRMInitSegmentError", "Failed to initialize segment.")
MRMFetchCandidateFieldsError = _simple("MRMFetchCandidateFieldsError", "Failed to fetch candidate category fields.")
MRMReadCategoryInfoError = _simple("MRMReadCategoryInfoError", "Failed to read category information.")
MRMFetchDataError = _simple("MRMFetchDataError", "Failed to fetch data by category.")


class MindRecordRuntimeError(RuntimeError):
    """A failure MindSpore reports from its C++ core, in the same layout.

    ``str(e)`` reads like MindSpore's text (headline, "Dataset Pipeline Error Message" section and
    ``[ERROR] <detail>``); ``e.detail`` is the one-line description alone.
    """

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"{_HEADLINE}\n\n{_RULE}\n- Dataset Pipeline Error Message: \n{_RULE}\n"
                         f"[ERROR] {detail}\n")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
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

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
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

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
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
