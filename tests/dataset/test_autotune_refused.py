"""ds.config.set_enable_autotune: headrace has no autotune, so True is refused with a clear error
instead of being accepted and ignored (issue 16); the argument checks are MindSpore's."""
import warnings

import pytest

import headrace.dataset as ds


def test_true_is_refused_naming_what_is_missing():
    with pytest.raises(NotImplementedError) as e:
        ds.config.set_enable_autotune(True)
    msg = str(e.value)
    assert msg.startswith("ds.config.set_enable_autotune(True): headrace has no dataset autotune: ")
    for part in ("num_parallel_workers per op", "thread or process mode", "prefetch depth",
                 "write the tuned configuration", "headrace profile"):
        assert part in msg
    with pytest.raises(NotImplementedError):
        ds.config.set_enable_autotune(True, "/tmp/autotune_out")
    assert ds.config.get_enable_autotune() is False


def test_false_and_argument_checks():
    ds.config.set_enable_autotune(False)
    assert ds.config.get_enable_autotune() is False
    with pytest.raises(TypeError, match="^enable must be of type bool.$"):
        ds.config.set_enable_autotune(1)
    with pytest.raises(TypeError, match="^json_filepath must be a str value but was: 3.$"):
        ds.config.set_enable_autotune(True, 3)
    with pytest.raises(RuntimeError, match="^The value of json_filepath cannot be the empty string.$"):
        ds.config.set_enable_autotune(True, "")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ds.config.set_enable_autotune(False, "/tmp/x")
    assert [str(x.message) for x in w] == ["The value of json_filepath is ignored when enable is False."]


@pytest.mark.compat
def test_argument_errors_match_mindspore():
    from tests.oracles.oracle import oracle_python, run_ms
    if oracle_python() is None:
        pytest.skip("the MindSpore oracle is not set up")
    ms = run_ms("""
RESULT = [repr(catch(lambda: ds.config.set_enable_autotune(1))),
          repr(catch(lambda: ds.config.set_enable_autotune(True, 3))),
          repr(catch(lambda: ds.config.set_enable_autotune(True, "")))]
""")
    mine = []
    for args in ((1,), (True, 3), (True, "")):
        try:
            ds.config.set_enable_autotune(*args)
        except Exception as e:  # noqa: BLE001 - compared as values
            mine.append(repr(e))
    assert mine == ms
