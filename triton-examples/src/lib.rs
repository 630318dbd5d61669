//! The project's Triton-style example kernels and their launch cases.
