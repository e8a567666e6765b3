//! Arbitrary bytes into the Matrix Market reader: it must answer `Ok` or `Err`, never panic,
//! and whatever it reads must survive write -> read unchanged.
//!
//! Seed the corpus from the shipped files: `mkdir -p fuzz/corpus/mm_read &&
//! cp -r tests/data/*.mtx tests/data/malformed/* fuzz/corpus/mm_read/`.

#![no_main]

use rgla::mm::{self, Field};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(read) = mm::read_from::<f64, _>(data, "fuzz.mtx") {
        let mut written = Vec::new();
        mm::write_coo_to(&mut written, &read.coo, Field::Real).expect("a matrix just read can be written");
        let again =
            mm::read_from::<f64, _>(&written[..], "written.mtx").expect("a written matrix reads back");
        assert_eq!(again.coo, read.coo, "write -> read changed the matrix");
    }
    let _ = mm::read_from::<f32, _>(data, "fuzz.mtx");
    let _ = mm::read_dense_from::<f64, _>(data, "fuzz.mtx");
});
