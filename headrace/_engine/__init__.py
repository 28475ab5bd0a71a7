"""Layer 1: the pipeline engine. It knows sources, samplers and callables, not MindSpore names."""
