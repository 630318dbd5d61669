//! Python (`@triton.jit`) to tile IR.
