//! Splits a byte stream into lines without copying each one: a large buffer is filled from the
//! reader, complete lines are handed out as slices of it, and a partial last line is moved to
//! the front before the next fill.

use std::io::{self, Read};

use super::error::MmErrorKind;

/// Bytes asked of the reader at a time, at most: large reads amortize system and decompressor
/// calls. The buffer starts small (a small input costs little) and doubles up to this.
const BUFFER_BYTES: usize = 256 * 1024;
const FIRST_BUFFER_BYTES: usize = 8 * 1024;

/// The longest line accepted. The format allows 1024 characters; this is generous, and it stops
/// a binary blob without newlines from growing the buffer without bound.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

// A partial line (shorter than the limit) always leaves room in the full-size buffer.
const _: () = assert!(MAX_LINE_BYTES < BUFFER_BYTES);

pub struct Lines<R> {
    reader: R,
    buffer: Vec<u8>,
    /// First byte not yet handed out.
    start: usize,
    /// End of the bytes read so far.
    end: usize,
    eof: bool,
    /// 1-based number of the last line handed out, or of the line an error is about.
    line_number: usize,
}

impl<R: Read> Lines<R> {
    pub fn new(reader: R) -> Lines<R> {
        Lines { reader, buffer: vec![0; FIRST_BUFFER_BYTES], start: 0, end: 0, eof: false, line_number: 0 }
    }

    pub fn line_number(&self) -> usize {
        self.line_number
    }

    /// The next line without its `\n` (a `\r` before it stays: the parsers treat it as a space),
    /// or `None` at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, MmErrorKind> {
        loop {
            let pending = &self.buffer[self.start..self.end];
            if let Some(length) = memchr::memchr(b'\n', pending) {
                let line_start = self.start;
                self.start += length + 1;
                self.line_number += 1;
                return Ok(Some(&self.buffer[line_start..line_start + length]));
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                // The last line has no newline.
                let line_start = self.start;
                self.start = self.end;
                self.line_number += 1;
                return Ok(Some(&self.buffer[line_start..self.end]));
            }
            self.fill()?;
        }
    }

    /// Moves the partial line to the front of the buffer and reads more after it.
    fn fill(&mut self) -> Result<(), MmErrorKind> {
        let pending = self.end - self.start;
        if pending >= MAX_LINE_BYTES {
            self.line_number += 1;
            return Err(MmErrorKind::LineTooLong(MAX_LINE_BYTES));
        }
        if self.buffer.len() < BUFFER_BYTES {
            // Doubling leaves room after any partial line, which is at most the old size.
            self.buffer.resize((self.buffer.len() * 2).min(BUFFER_BYTES), 0);
        }
        self.buffer.copy_within(self.start..self.end, 0);
        self.start = 0;
        self.end = pending;
        loop {
            match self.reader.read(&mut self.buffer[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(read) => self.end += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    self.line_number += 1;
                    return Err(MmErrorKind::Io(error));
                }
            }
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_lines(input: &[u8]) -> Vec<Vec<u8>> {
        let mut lines = Lines::new(input);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line.to_vec());
        }
        out
    }

    #[test]
    fn splits_on_newlines_and_keeps_a_last_line_without_one() {
        assert_eq!(all_lines(b"a\nbb\r\n\nc"), vec![b"a".to_vec(), b"bb\r".to_vec(), vec![], b"c".to_vec()]);
        assert_eq!(all_lines(b""), Vec::<Vec<u8>>::new());
        assert_eq!(all_lines(b"x\n"), vec![b"x".to_vec()]);
    }

    #[test]
    fn lines_straddling_buffer_refills_come_out_whole() {
        let text: String = (0..100_000).map(|i| format!("{i} {i} 1.5\n")).collect();
        let lines = all_lines(text.as_bytes());
        assert_eq!(lines.len(), 100_000);
        assert_eq!(lines[77_777], b"77777 77777 1.5");
    }

    #[test]
    fn a_line_longer_than_the_limit_is_an_error() {
        let text = vec![b'7'; MAX_LINE_BYTES * 2];
        let mut lines = Lines::new(&text[..]);
        assert!(matches!(lines.next_line(), Err(MmErrorKind::LineTooLong(_))));
        assert_eq!(lines.line_number(), 1);
    }
}
