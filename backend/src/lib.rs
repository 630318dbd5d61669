//! Backend: layouts, shared-memory allocation, CUDA C++ + inline PTX emission
//! and the cudarc runtime. Not written yet: the plain-backend issue builds it.

pub mod runtime;
pub mod toolchain;
