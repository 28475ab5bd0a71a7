"""Mirror of ``mindspore.dataset.debug``. headrace has none of its names yet; each arrives here when it
works (no placeholders), so ``from headrace.dataset.debug import X`` fails clearly until then."""

__all__: list[str] = []
