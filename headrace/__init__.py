"""headrace: fast data pipelines with the mindspore.dataset / mindspore.mindrecord API."""
__version__ = "0.1.0"
