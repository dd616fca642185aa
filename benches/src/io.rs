//! The IO benchmark (`weir-bench io`): a generated file read and framed by
//! lines, counting lines and bytes, by Weir (`FileIO::from_path` +
//! `Framing::delimiter` + fold), by a `std::io::BufRead::read_until` loop
//! (the limit) and (feature `peers`) by tokio_util's `FramedRead` with
//! `LinesCodec`; and a file copy through `FileIO::from_path` into
//! `FileIO::to_path` beside `std::io::copy`.
//!
//! Every line variant returns the same `(lines, bytes)`, so none can skip
//! the work.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use weir_streams::io::{Bytes, FileIO, Framing};
use weir_streams::prelude::*;

/// The chunk size every reader uses.
pub const CHUNK: usize = 64 * 1024;

/// The longest line the framing stages accept.
const MAX_LINE: usize = 64 * 1024;

/// Write about `bytes` bytes of lines of 1 to 120 characters to `path`.
///
/// # Errors
///
/// The file cannot be written.
pub fn generate(path: &Path, bytes: u64) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(CHUNK, std::fs::File::create(path)?);
    let mut written = 0u64;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let line: Vec<u8> = (0..120).map(|i| b'a' + (i % 26) as u8).collect();
    while written < bytes {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = 1 + (seed % 120) as usize;
        out.write_all(&line[..len])?;
        out.write_all(b"\n")?;
        written += len as u64 + 1;
    }
    out.flush()
}

/// `(lines, bytes without the newlines)` by a `read_until` loop.
pub fn std_lines(path: &Path) -> (u64, u64) {
    let file = std::fs::File::open(path).expect("the file exists");
    let mut reader = BufReader::with_capacity(CHUNK, file);
    let mut line = Vec::with_capacity(256);
    let (mut lines, mut bytes) = (0u64, 0u64);
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).expect("the file reads");
        if n == 0 {
            return (lines, bytes);
        }
        lines += 1;
        bytes += (n - usize::from(line.last() == Some(&b'\n'))) as u64;
    }
}

/// `(lines, bytes)` by `FileIO::from_path` + `Framing::delimiter` + fold.
pub fn weir_lines(path: &Path, mat: &Materializer) -> (u64, u64) {
    FileIO::from_path(path, CHUNK)
        .expect("a chunk size")
        .via(Framing::delimiter(b"\n", MAX_LINE, true).expect("a delimiter"))
        .run_with(
            Sink::fold((0u64, 0u64), |(n, b), line: Bytes| {
                (n + 1, b + line.len() as u64)
            }),
            mat,
        )
        .wait()
        .expect("the stream completes")
}

/// `(lines, bytes)` by tokio_util's `FramedRead` + `LinesCodec` on a
/// current-thread runtime.
#[cfg(feature = "peers")]
pub fn tokio_lines(path: &Path) -> (u64, u64) {
    use futures_util::StreamExt;
    use tokio_util::codec::{FramedRead, LinesCodec};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let file = tokio::fs::File::open(path).await.expect("the file exists");
        let mut lines =
            FramedRead::with_capacity(file, LinesCodec::new_with_max_length(MAX_LINE), CHUNK);
        let (mut n, mut b) = (0u64, 0u64);
        while let Some(line) = lines.next().await {
            n += 1;
            b += line.expect("a line").len() as u64;
        }
        (n, b)
    })
}

/// Copy `from` to `to` with `std::io::copy`; the byte count.
pub fn std_copy(from: &Path, to: &Path) -> u64 {
    let mut input = std::fs::File::open(from).expect("the file exists");
    let mut output = std::fs::File::create(to).expect("the copy can be made");
    std::io::copy(&mut input, &mut output).expect("the copy completes")
}

/// Copy `from` to `to` through `FileIO::from_path` into `FileIO::to_path`.
pub fn weir_copy(from: &Path, to: &Path, mat: &Materializer) -> u64 {
    FileIO::from_path(from, CHUNK)
        .expect("a chunk size")
        .run_with(FileIO::to_path(to, FileIO::write_options()), mat)
        .wait()
        .expect("the copy completes")
        .count
}
