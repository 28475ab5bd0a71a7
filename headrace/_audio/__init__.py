"""Audio kernels over NumPy / SciPy: filters and effects, STFT and mel transforms, resampling, WAV
I/O. Plain functions on arrays with no MindSpore vocabulary (no op objects, no enums)."""
