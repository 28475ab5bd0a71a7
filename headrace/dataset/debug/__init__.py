"""Mirror of ``mindspore.dataset.debug``: the hooks of debug mode (``ds.config.set_debug_mode``)."""
from headrace.dataset.debug._hooks import DebugHook, PrintDataHook, PrintMetaDataHook

__all__ = ["DebugHook", "PrintDataHook", "PrintMetaDataHook"]
