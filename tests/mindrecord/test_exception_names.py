"""MindSpore's MindRecord exception names, messages and error codes (values from MindSpore 2.10)."""
from __future__ import annotations

import pickle

import pytest

import headrace.mindrecord as mr
from headrace.mindrecord.common import exceptions as exc

# name: (arguments, str(), error_code)
CASES = {
    "UnknownError": ((), "[UnknownError]: Unknown Error.", 1347686400),
    "ParamTypeError": (("p", "int"), "[ParamTypeError]: Invalid parameter type. 'p' expect int type.", 1347686401),
    "ParamValueError": (("bad",), "[ParamValueError]: Invalid parameter value. bad", 1347686402),
    "ParamMissError": (("p",), "[ParamMissError]: Param missing. 'p' is required.", 1347686403),
    "PathNotExistsError": (("x",), "[PathNotExistsError]: Invalid path. x", 1347686404),
    "DbConnectionError": (("d",), "[DbConnectionError]: Db connection is error. Detail: d", 1347686405),
    "MRMOpenError": ((), "[MRMOpenError]: MindRecord File could not open successfully.", 1347690596),
    "MRMInvalidPageSizeError": ((), "[MRMInvalidPageSizeError]: Failed to set page size.", 1347690598),
    "MRMInvalidHeaderSizeError": ((), "[MRMInvalidHeaderSizeError]: Failed to set header size.", 1347690599),
    "MRMSetHeaderError": ((), "[MRMSetHeaderError]: Failed to set header.", 1347690600),
    "MRMWriteDatasetError": ((), "[MRMWriteDatasetError]: Failed to write dataset.", 1347690601),
    "MRMCommitError": ((), "[MRMCommitError]: Failed to commit.", 1347690603),
    "MRMLaunchError": ((), "[MRMLaunchError]: Failed to launch.", 1347690604),
    "MRMFinishError": ((), "[MRMFinishError]: Failed to finish.", 1347690605),
    "MRMCloseError": ((), "[MRMCloseError]: Failed to close.", 1347690606),
    "MRMGetMetaError": ((), "[MRMGetMetaError]: Failed to get meta info.", 1347690610),
    "MRMIndexGeneratorError": ((), "[MRMIndexGeneratorError]: Failed to create index generator.", 1347690611),
    "MRMGenerateIndexError": ((), "[MRMGenerateIndexError]: Failed to generate index.", 1347690612),
    "MRMInitSegmentError": ((), "[MRMInitSegmentError]: Failed to initialize segment.", 1347690613),
    "MRMFetchCandidateFieldsError": ((), "[MRMFetchCandidateFieldsError]: Failed to fetch candidate category "
                                         "fields.", 1347690614),
    "MRMReadCategoryInfoError": ((), "[MRMReadCategoryInfoError]: Failed to read category information.", 1347690615),
    "MRMFetchDataError": ((), "[MRMFetchDataError]: Failed to fetch data by category.", 1347690616),
    "MRMInvalidSchemaError": (("s",), "[MRMInvalidSchemaError]: Schema format is error. Detail: s", 1347694792),
    "MRMDefineBlobError": (("b",), "[MRMDefineBlobError]: Failed to define blob field. Detail: b", 1347694795),
    "MRMDefineCategoryError": (("c",), "[MRMDefineCategoryError]: Failed to define category field. Detail: c",
                               1347694797),
    "MRMValidateDataError": (("v",), "[MRMValidateDataError]: Raw data do not match the schema. Detail: v",
                             1347694793),
    "MRMDefineIndexError": (("v",), "[MRMDefineIndexError]: Failed to define index field. Detail: v", 1347694794),
    "MRMUnsupportedSchemaError": (("v",), "[MRMUnsupportedSchemaError]: Schema is not supported. Detail: v",
                                  1347694796),
}

# the classes built from one detail take it by MindSpore's keyword too
DETAILED = ("ParamValueError", "DbConnectionError", "MRMInvalidSchemaError", "MRMValidateDataError",
            "MRMDefineIndexError", "MRMUnsupportedSchemaError", "MRMDefineCategoryError", "MRMDefineBlobError")


@pytest.mark.parametrize("name", sorted(CASES))
def test_names_messages_and_codes(name):
    args, text, code = CASES[name]
    cls = getattr(mr, name)
    assert cls is getattr(exc, name)
    e = cls(*args)
    assert isinstance(e, exc.MindRecordException)
    assert (str(e), e.error_code) == (text, code)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is cls and str(back) == text


def test_tables_and_every_mindspore_name():
    ms_names = {"DbConnectionError", "EXCEPTIONS", "ErrorCodeType", "ErrorLevel", "LogRuntime", "MRMAddIndexError",
                "MRMAddSchemaError", "MRMBuildSchemaError", "MRMCloseError", "MRMCommitError", "MRMDefineBlobError",
                "MRMDefineCategoryError", "MRMDefineIndexError", "MRMFetchCandidateFieldsError", "MRMFetchDataError",
                "MRMFinishError", "MRMGenerateIndexError", "MRMGetMetaError", "MRMIndexGeneratorError",
                "MRMInitSegmentError", "MRMInvalidHeaderSizeError", "MRMInvalidPageSizeError",
                "MRMInvalidSchemaError", "MRMLaunchError", "MRMOpenError", "MRMOpenForAppendError",
                "MRMReadCategoryInfoError", "MRMSetHeaderError", "MRMUnsupportedSchemaError", "MRMValidateDataError",
                "MRMWriteDatasetError", "MindRecordException", "ParamMissError", "ParamTypeError", "ParamValueError",
                "PathNotExistsError", "SYS_ID", "UnknownError", "set_enc_key", "set_enc_mode", "set_dec_mode"}
    assert ms_names <= set(dir(mr)) and ms_names - {"set_enc_key", "set_enc_mode", "set_dec_mode"} <= set(dir(exc))
    assert exc.SYS_ID == 42 and exc.EXCEPTIONS["MRMFetchDataError"] == [120, "Failed to fetch data by category."]
    assert (exc.ErrorCodeType.ERROR_CODE, exc.ErrorLevel.CRITICAL_LEVEL, exc.LogRuntime.RT_DEVICE) == (1, 4, 2)
    assert exc.MindRecordException.transform_error_code(205) == 1347694797
    assert isinstance(exc.ParamMissError("p"), ValueError) and isinstance(exc.MRMCloseError(), RuntimeError)


@pytest.mark.parametrize("name", DETAILED)
def test_detail_keyword(name):
    args, text, _ = CASES[name]
    assert str(getattr(exc, name)(error_detail=args[0])) == text
