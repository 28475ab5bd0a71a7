"""Image kernels: plain functions on NumPy arrays / bytes, shared by ops, fusions and benchmarks."""
