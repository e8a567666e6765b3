//! Host side of the workspace: loads the Rust-built PTX, owns device memory, launches the
//! kernels and drives their loops; also the formats, Matrix Market I/O, generators and the
//! CPU references every kernel is checked against.
//!
//! Data path: a file or generator -> a host format (`sparse`) -> device buffers (`gpu`) -> a
//! kernel -> a result checked against the CPU reference (`verify`) -> a timing row in a report.

pub mod bench;
pub mod blas1;
pub mod dense;
pub mod error;
pub mod gemm;
pub mod gpu;
pub mod kernels;
pub mod memory;
pub mod mm;
pub mod scalar;
pub mod solve;
pub mod sparse;
pub mod spmv;
pub mod symgs;
pub mod vendor;
pub mod verify;

pub use error::{Error, Result};
pub use gpu::{Gpu, Launch};
pub use scalar::Scalar;
