"""MindSpore's MindRecord exception classes (``mindspore.mindrecord.common.exceptions``)."""
from __future__ import annotations

from .._format.errors import (MRMAddIndexError, MRMAddSchemaError, MRMBuildSchemaError, MRMDefineCategoryError,
                              MRMDefineIndexError, MRMGetMetaError, MRMInvalidSchemaError, MRMOpenError,
                              MRMOpenForAppendError, MRMUnsupportedSchemaError, MRMValidateDataError,
                              MindRecordException, MindRecordFormatError, MindRecordRuntimeError, ParamTypeError,
                              ParamValueError, PathNotExistsError, UnknownError)

__all__ = [
    "MRMAddIndexError",
    "MRMAddSchemaError",
    "MRMBuildSchemaError",
    "MRMDefineCategoryError",
    "MRMDefineIndexError",
    "MRMGetMetaError",
    "MRMInvalidSchemaError",
    "MRMOpenError",
    "MRMOpenForAppendError",
    "MRMUnsupportedSchemaError",
    "MRMValidateDataError",
    "MindRecordException",
    "MindRecordFormatError",
    "MindRecordRuntimeError",
    "ParamTypeError",
    "ParamValueError",
    "PathNotExistsError",
    "UnknownError",
]
