//! Matrix Market I/O.
