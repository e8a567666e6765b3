//! Dense solve A x = b by Gaussian elimination with partial pivoting, as a progression: the
//! Milan report's column-at-a-time elimination on the augmented matrix (`classic`), then a
//! blocked right-looking LU whose trailing update is a GEMM (`blocked`, with
//! `gemm::update`), the triangular solves both end with (`triangular`), the check of the
//! pivots (`pivots`), the transpose that hands a row-major matrix to column-major cuSOLVER
//! (`transpose`), and the f64 iterative refinement of the mixed-precision solve (`refine`).

pub mod blocked;
pub mod classic;
pub mod pivots;
pub mod refine;
pub mod transpose;
pub mod triangular;
