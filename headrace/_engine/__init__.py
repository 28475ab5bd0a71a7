"""The pipeline engine (layer 2 of ARCHITECTURE.md): plans, op iterators, samplers, parallel
execution, the run and its checkpoint state. It knows sources, samplers and callables, not MindSpore
names, and never imports `dataset` or `mindrecord`."""
