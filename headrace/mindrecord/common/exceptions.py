"""MindSpore's MindRecord exception classes (``mindspore.mindrecord.common.exceptions``)."""
from __future__ import annotations

from .._format.errors import (EXCEPTIONS, SYS_ID, DbConnectionError, ErrorCodeType, ErrorLevel, LogRuntime,
                              MindRecordException, MindRecordFormatError, MindRecordRuntimeError, MRMAddIndexError,
                              MRMAddSchemaError, MRMBuildSchemaError, MRMCloseError, MRMCommitError,
                              MRMDefineBlobError, MRMDefineCategoryError, MRMDefineIndexError,
                              MRMFetchCandidateFieldsError, MRMFetchDataError, MRMFinishError, MRMGenerateIndexError,
                              MRMGetMetaError, MRMIndexGeneratorError, MRMInitSegmentError,
                              MRMInvalidHeaderSizeError, MRMInvalidPageSizeError, MRMInvalidSchemaError,
                              MRMLaunchError, MRMOpenError, MRMOpenForAppendError, MRMReadCategoryInfoError,
                              MRMSetHeaderError, MRMUnsupportedSchemaError, MRMValidateDataError,
                              MRMWriteDatasetError, ParamMissError, ParamTypeError, ParamValueError,
                              PathNotExistsError, UnknownError)

# MindSpore's names, in its order of export; the two MindRecordRuntimeError classes are headrace's.
__all__ = [
    "DbConnectionError", "EXCEPTIONS", "ErrorCodeType", "ErrorLevel", "LogRuntime", "MRMAddIndexError",
    "MRMAddSchemaError", "MRMBuildSchemaError", "MRMCloseError", "MRMCommitError", "MRMDefineBlobError",
    "MRMDefineCategoryError", "MRMDefineIndexError", "MRMFetchCandidateFieldsError", "MRMFetchDataError",
    "MRMFinishError", "MRMGenerateIndexError", "MRMGetMetaError", "MRMIndexGeneratorError", "MRMInitSegmentError",
    "MRMInvalidHeaderSizeError", "MRMInvalidPageSizeError", "MRMInvalidSchemaError", "MRMLaunchError",
    "MRMOpenError", "MRMOpenForAppendError", "MRMReadCategoryInfoError", "MRMSetHeaderError",
    "MRMUnsupportedSchemaError", "MRMValidateDataError", "MRMWriteDatasetError", "MindRecordException",
    "MindRecordFormatError", "MindRecordRuntimeError", "ParamMissError", "ParamTypeError", "ParamValueError",
    "PathNotExistsError", "SYS_ID", "UnknownError",
]
