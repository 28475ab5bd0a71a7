"""Vocab (word <-> id tables built from lists, dicts, files or a pipeline) and the Lookup op."""
from __future__ import annotations

import os
from collections import Counter
from typing import Any, Iterable

import numpy as np

from headrace._util.checks import check_type
from headrace.common import dtype as mstype
from headrace.dataset.text._common import TextOperation, decode_item
from headrace._util.pickling import set_attributes

__all__ = ["Lookup", "Vocab"]

INT32_MAX = 2**31 - 1
_NOT_BUILT = ("The Vocab has not built yet, got type <class 'NoneType'>. Use Vocab.from_dataset(), "
              "Vocab.from_list(), Vocab.from_file() or Vocab.from_dict() to build a Vocab.")


class Vocab:
    """A table of words and their ids, as MindSpore's ``text.Vocab``; build it with a ``from_*`` method.

    Examples:
        >>> v = Vocab.from_list(["a", "b"], special_tokens=["<pad>"])
        >>> v.vocab(), v.tokens_to_ids(["b", "z"]), v.ids_to_tokens(0)
        ({'<pad>': 0, 'a': 1, 'b': 2}, [2, -1], '<pad>')
    """

    def __init__(self) -> None:
        self._ids: dict[str, int] | None = None
        self._words: dict[int, str] = {}

    def _built(self) -> dict[str, int]:
        if self._ids is None:
            raise RuntimeError(_NOT_BUILT)
        return self._ids

    @classmethod
    def _of(cls, ids: dict[str, int]) -> "Vocab":
        v = cls()
        v._ids = ids
        v._words = {}
        for w, i in ids.items():
            v._words.setdefault(i, w)
        return v

    def __getstate__(self) -> dict:
        return {"ids": self._ids}

    def __setstate__(self, state: dict) -> None:
        if state["ids"] is None:
            self.__init__()
        else:
            set_attributes(self, vars(Vocab._of(state["ids"])))

    def vocab(self) -> dict[str, int]:
        """The table as a dict ``{word: id}``."""
        return dict(self._built())

    def __len__(self) -> int:
        return len(self._built())

    def tokens_to_ids(self, tokens: Any) -> Any:
        """Ids of a token (an int) or of a list/array of tokens (a list); -1 for unknown tokens."""
        ids = self._built()
        check_type(tokens, (str, list, np.ndarray), "tokens")
        if isinstance(tokens, str):
            return ids.get(tokens, -1)
        if isinstance(tokens, np.ndarray):
            if tokens.ndim == 0:
                return ids.get(decode_item(tokens.item()), -1)
            return [ids.get(decode_item(t), -1) for t in tokens.tolist()]
        for t in tokens:
            check_type(t, str, "tokens")
        return [ids.get(t, -1) for t in tokens]

    def ids_to_tokens(self, ids: Any) -> Any:
        """Token of an id (a str) or of a list/array of ids (a list); "" for unknown ids."""
        self._built()
        check_type(ids, (int, list, np.ndarray), "ids")
        if isinstance(ids, int):
            _check_id(ids, "ids")
            return self._words.get(ids, "")
        if isinstance(ids, np.ndarray) and ids.ndim == 0:
            return self.ids_to_tokens(int(ids))
        values = ids.tolist() if isinstance(ids, np.ndarray) else ids
        for i in values:
            _check_id(i, "ids")
        return [self._words.get(i, "") for i in values]

    # ----------------------------------------------------------------------------- builders
    @classmethod
    def from_list(cls, word_list: list, special_tokens: list | None = None, special_first: bool = True) -> "Vocab":
        """Ids in list order; `special_tokens` go before (or after) the words."""
        check_type(word_list, list, "word_list")
        for w in word_list:
            check_type(w, str, "word_list")
        if len(set(word_list)) != len(word_list):
            dup = next(w for w, n in Counter(word_list).items() if n > 1)
            raise ValueError(f"word_list contains duplicate word: {dup}.")
        specials = _check_specials(special_tokens, special_first)
        both = set(word_list) & set(specials)
        if both:
            raise ValueError(f"special_tokens and word_list contain duplicate word :{both}.")
        return cls._of(_numbered(word_list, specials, special_first))

    @classmethod
    def from_dict(cls, word_dict: dict) -> "Vocab":
        """The given ``{word: id}`` table (ids in [0, 2**31 - 1])."""
        check_type(word_dict, dict, "word_dict")
        for w, i in word_dict.items():
            check_type(w, str, "word")
            check_type(i, int, "word_id")
            if not 0 <= i <= INT32_MAX:
                raise ValueError(f"Input word_id is not within the required interval of [0, {INT32_MAX}].")
        return cls._of(dict(word_dict))

    @classmethod
    def from_file(cls, file_path: str, delimiter: str = "", vocab_size: int | None = None,
                  special_tokens: list | None = None, special_first: bool = True) -> "Vocab":
        """One word a line (the text before `delimiter` when it is given), at most `vocab_size` words."""
        check_type(file_path, str, "file_path")
        check_type(delimiter, str, "delimiter")
        if vocab_size is not None:
            check_type(vocab_size, int, "vocab_size")
            if vocab_size <= 0:
                raise ValueError("Input vocab_size must be greater than 0.")
        specials = _check_specials(special_tokens, special_first)
        if not os.path.isfile(file_path):
            raise RuntimeError(f"Get real path failed, path={file_path}")
        words: list[str] = []
        seen = set(specials)
        with open(file_path, encoding="utf-8") as f:
            for line in f:
                if vocab_size is not None and len(words) >= vocab_size:
                    break
                line = line.rstrip("\n").rstrip("\r")
                word = line.split(delimiter, 1)[0] if delimiter else line
                if word in seen:
                    raise RuntimeError(f"from_file: word_list contains duplicate word:{word}")
                seen.add(word)
                words.append(word)
        return cls._of(_numbered(words, specials, special_first))

    @classmethod
    def from_dataset(cls, dataset: Any, columns: Any = None, freq_range: Any = None, top_k: int | None = None,
                     special_tokens: list | None = None, special_first: bool = True) -> "Vocab":
        """Counts the words in `columns` of a pipeline; keeps those whose count lies in `freq_range`
        (inclusive, None = unbounded), the `top_k` most frequent (ties in string order)."""
        cols = [columns] if isinstance(columns, str) else columns
        if cols is not None:
            check_type(cols, list, "columns")
            for c in cols:
                check_type(c, str, "columns")
        lo, hi = _check_freq(freq_range)
        if top_k is not None:
            check_type(top_k, int, "top_k")
            if top_k <= 0:
                raise ValueError("Input top_k must be greater than 0.")
        specials = _check_specials(special_tokens, special_first)
        counts = count_tokens(dataset, cols)
        kept = [(w, n) for w, n in counts.items() if lo <= n <= hi]
        kept.sort(key=lambda wn: (-wn[1], wn[0]))
        words = [w for w, _ in kept[:top_k] if w not in specials] if top_k else [w for w, _ in kept if w not in specials]
        return cls._of(_numbered(words, specials, special_first))


def count_tokens(dataset: Any, columns: list | None) -> Counter:
    """Token counts over `columns` (all columns when None) of every row of `dataset`."""
    names = dataset.get_col_names()
    for c in columns or []:
        if c not in names:
            raise RuntimeError(f"Invalid column name, column name: {c} does not exist, check existed column "
                               f"with dataset API 'get_col_names'")
    counts: Counter = Counter()
    for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
        for c in columns or names:
            a = row[c]
            if a.dtype.kind not in "US":
                raise RuntimeError(f"from_dataset: column {c} is not of string type.")
            counts.update(decode_item(t) for t in np.ravel(a).tolist())
    return counts


def _check_id(i: Any, name: str) -> None:
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i <= INT32_MAX:
        if isinstance(i, int) and not isinstance(i, bool):
            raise ValueError(f"Input {name} is not within the required interval of [0, {INT32_MAX}].")
        check_type(i, int, name)


def _check_specials(special_tokens: Any, special_first: Any) -> list[str]:
    if special_tokens is None:
        specials: list[str] = []
    else:
        check_type(special_tokens, list, "special_tokens")
        for t in special_tokens:
            check_type(t, str, "special_tokens")
        if len(set(special_tokens)) != len(special_tokens):
            raise ValueError("special_tokens contains duplicate token.")
        specials = list(special_tokens)
    check_type(special_first, bool, "special_first")
    return specials


def _check_freq(freq_range: Any) -> tuple[float, float]:
    if freq_range is None:
        return 0, float("inf")
    check_type(freq_range, tuple, "freq_range")
    if len(freq_range) != 2:
        raise ValueError("freq_range needs to be a tuple of 2 element.")
    lo = 0 if freq_range[0] is None else freq_range[0]
    hi = float("inf") if freq_range[1] is None else freq_range[1]
    for v in (lo, hi):
        if v != float("inf"):
            check_type(v, int, "freq_range")
    if not 0 <= lo <= hi:
        raise ValueError("frequency range [a,b] should be 0 <= a <= b (a,b are inclusive).")
    return lo, hi


def _numbered(words: Iterable[str], specials: list[str], special_first: bool) -> dict[str, int]:
    order = (specials + list(words)) if special_first else (list(words) + specials)
    return {w: i for i, w in enumerate(order)}


class Lookup(TextOperation):
    """Replaces each token by its id in a :class:`Vocab` (tokens of any shape; unknown tokens take
    the id of `unknown_token`, or raise when it is None).

    Args:
        vocab (Vocab): the table.
        unknown_token (str, optional): the word whose id unknown tokens get. Default: None.
        data_type (mindspore.dtype): the output type (numeric or bool). Default: ``mstype.int32``.

    Examples:
        >>> Lookup(Vocab.from_list(["<unk>", "a"]), "<unk>")(np.array(["a", "zz"])).tolist()
        [1, 0]
    """

    def __init__(self, vocab: Vocab, unknown_token: str | None = None, data_type: Any = mstype.int32) -> None:
        check_type(vocab, Vocab, "vocab is not an instance of text.Vocab.")
        if unknown_token is not None:
            check_type(unknown_token, str, "unknown_token")
        check_type(data_type, mstype.Type, "data_type")
        self.vocab, self.unknown_token, self.data_type = vocab, unknown_token, data_type
        self._dtype = data_type.np_dtype
        self._table = vocab._built()

    def __call__(self, *args: Any) -> np.ndarray:
        if len(args) != 1:
            raise RuntimeError(f"Input should be one column data, but got {len(args)} columns.")
        if self._dtype.kind not in "biuf":
            raise RuntimeError("Lookup : The parameter data_type must be numeric including bool.")
        table, unk = self._table, self.unknown_token
        if unk is not None and unk not in table:
            raise RuntimeError(f'Lookup: "{unk}" doesn\'t exist in vocab.')
        value = args[0]
        a = np.array(value) if isinstance(value, str) else np.asarray(value)
        if a.dtype.kind not in "US":
            raise RuntimeError("Lookup: input is not string datatype.")
        if a.dtype.kind == "S":
            a = np.char.decode(a, "utf-8")
        default = -1 if unk is None else table[unk]
        flat = a.reshape(-1).tolist()
        get = table.get
        ids = [get(t, default) for t in flat]
        if unk is None and -1 in ids:
            bad = flat[ids.index(-1)]
            raise RuntimeError(f'Lookup: invalid data, token: "{bad}" doesn\'t exist in vocab and no unknown '
                               f'token is specified.')
        return np.array(ids, dtype=self._dtype).reshape(a.shape)
