"""Fast backends: numba (fused CPU kernels) and cupy (GPU). Imported lazily by lwsim.cells.base."""
