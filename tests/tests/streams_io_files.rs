//! FileIO and StreamConverters: byte counts, typed IO errors, start positions, and the blocking dispatcher.

use std::io::{Cursor, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use weir_streams::io::{FileIO, Framing, IoError, IoResult, StreamConverters};
use weir_streams::prelude::*;
use weir_tests::{PATIENCE, shutdown, stream_system};

/// A file path in the temp dir, removed when dropped.
struct TempPath(PathBuf);

impl TempPath {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir();
        Self(dir.join(format!("weir-io-{}-{name}", std::process::id())))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn wait<T>(completion: Completion<T>) -> Result<T, StreamError> {
    completion.wait_timeout(PATIENCE).expect("the stream ends")
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn a_file_round_trips_in_any_chunk_size_with_byte_counts() {
    let (system, m) = stream_system("file-round-trip");
    let path = TempPath::new("round-trip");
    let data = pattern(100_000);
    let chunks: Vec<Bytes> = data.chunks(3_001).map(Bytes::copy_from_slice).collect();
    let written =
        Source::from_iter(chunks).run_with(FileIO::to_path(&path.0, FileIO::write_options()), &m);
    assert_eq!(wait(written), Ok(IoResult { count: 100_000 }));
    assert_eq!(std::fs::read(&path.0).unwrap(), data);
    for chunk_size in [7usize, 4096, 1 << 20] {
        let (read, out) = FileIO::from_path(&path.0, chunk_size)
            .unwrap()
            .to_mat(Sink::collect(), Keep::both)
            .run(&m);
        let out = wait(out).unwrap();
        assert!(out.iter().all(|c| c.len() <= chunk_size));
        assert_eq!(out.concat(), data);
        assert_eq!(wait(read), Ok(IoResult { count: 100_000 }));
    }
    shutdown(&system);
}

#[test]
fn from_path_at_starts_at_the_position_and_append_appends() {
    let (system, m) = stream_system("file-position");
    let path = TempPath::new("position");
    std::fs::write(&path.0, b"0123456789").unwrap();
    let (read, out) = FileIO::from_path_at(&path.0, 1, 6)
        .unwrap()
        .to_mat(Sink::collect(), Keep::both)
        .run(&m);
    assert_eq!(wait(out).unwrap().concat(), b"6789");
    assert_eq!(wait(read), Ok(IoResult { count: 4 }));
    let appended = Source::single(Bytes::from_static(b"ab"))
        .run_with(FileIO::to_path(&path.0, FileIO::append_options()), &m);
    assert_eq!(wait(appended), Ok(IoResult { count: 2 }));
    assert_eq!(std::fs::read(&path.0).unwrap(), b"0123456789ab");
    shutdown(&system);
}

#[test]
fn a_missing_file_fails_the_stream_and_the_completion_with_kind_and_path() {
    let (system, m) = stream_system("file-missing");
    let path = TempPath::new("missing");
    let (read, out) = FileIO::from_path(&path.0, 16)
        .unwrap()
        .to_mat(Sink::collect(), Keep::both)
        .run(&m);
    let read = wait(read).unwrap_err();
    let io = IoError::of(&read).expect("an IO error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(io.operation(), "open");
    assert_eq!(io.path(), Some(path.0.as_path()));
    let out = wait(out).unwrap_err();
    assert_eq!(IoError::of(&out), Some(io));
    assert_eq!(out.stage(), Some("file-source"));
    shutdown(&system);
}

#[test]
fn a_file_sink_that_cannot_open_fails_and_cancels_upstream() {
    let (system, m) = stream_system("file-sink-open");
    let path = std::env::temp_dir().join("weir-no-such-dir").join("x");
    let written = Source::repeat(Bytes::from_static(b"x"))
        .run_with(FileIO::to_path(&path, FileIO::write_options()), &m);
    let error = wait(written).unwrap_err();
    let io = IoError::of(&error).expect("an IO error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(io.path(), Some(path.as_path()));
    shutdown(&system);
}

#[test]
fn io_stages_run_on_a_pinned_thread() {
    let (system, m) = stream_system("file-thread");
    let path = TempPath::new("thread");
    std::fs::write(&path.0, b"abc").unwrap();
    let threads = FileIO::from_path(&path.0, 1)
        .unwrap()
        .map(|_| std::thread::current().name().unwrap_or("").to_owned())
        .run_with(Sink::collect(), &m);
    let threads = wait(threads).unwrap();
    assert_eq!(threads.len(), 3);
    assert!(
        threads.iter().all(|t| t.ends_with("-pinned")),
        "{threads:?}"
    );
    shutdown(&system);
}

#[test]
fn a_file_framed_by_lines_counts_lines_and_bytes() {
    let (system, m) = stream_system("file-lines");
    let path = TempPath::new("lines");
    let mut text = String::new();
    for i in 0..10_000 {
        text.push_str(&format!("line number {i}\n"));
    }
    std::fs::write(&path.0, &text).unwrap();
    let counted = FileIO::from_path(&path.0, 4096)
        .unwrap()
        .via(Framing::delimiter(b"\n", 256, false).unwrap())
        .run_with(
            Sink::fold((0u64, 0u64), |(n, b), line: Bytes| {
                (n + 1, b + line.len() as u64)
            }),
            &m,
        );
    assert_eq!(wait(counted), Ok((10_000, (text.len() - 10_000) as u64)));
    shutdown(&system);
}

#[test]
fn cancelling_a_file_source_reports_what_was_read() {
    let (system, m) = stream_system("file-cancel");
    let path = TempPath::new("cancel");
    std::fs::write(&path.0, pattern(1000)).unwrap();
    let (read, first) = FileIO::from_path(&path.0, 100)
        .unwrap()
        .to_mat(Sink::head(), Keep::both)
        .run(&m);
    assert_eq!(wait(first).unwrap().len(), 100);
    let count = wait(read).unwrap().count;
    assert!((100..=200).contains(&count), "{count}");
    shutdown(&system);
}

/// Reads `good` bytes, then fails.
struct Failing {
    good: usize,
}

impl Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.good == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "gone",
            ));
        }
        let n = buf.len().min(self.good);
        buf[..n].fill(b'z');
        self.good -= n;
        Ok(n)
    }
}

#[test]
fn a_reader_error_fails_the_stream_with_the_read_kind() {
    let (system, m) = stream_system("read-error");
    let (read, out) = StreamConverters::from_read(|| Failing { good: 10 }, 4)
        .unwrap()
        .to_mat(Sink::collect(), Keep::both)
        .run(&m);
    let error = wait(read).unwrap_err();
    let io = IoError::of(&error).unwrap();
    assert_eq!(
        (io.kind(), io.operation(), io.path()),
        (std::io::ErrorKind::ConnectionReset, "read", None)
    );
    assert!(IoError::of(&wait(out).unwrap_err()).is_some());
    shutdown(&system);
}

/// A writer into a shared vector that fails once it holds `limit` bytes.
#[derive(Clone)]
struct Shared {
    out: Arc<Mutex<Vec<u8>>>,
    limit: usize,
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = self.out.lock().unwrap();
        if out.len() + buf.len() > self.limit {
            return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "full"));
        }
        out.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn readers_and_writers_copy_and_a_writer_error_fails_the_sink() {
    let (system, m) = stream_system("converters");
    let data = pattern(10_000);
    let source_data = data.clone();
    let writer = Shared {
        out: Arc::new(Mutex::new(Vec::new())),
        limit: usize::MAX,
    };
    let sink_writer = writer.clone();
    let copied = StreamConverters::from_read(move || Cursor::new(source_data.clone()), 333)
        .unwrap()
        .run_with(StreamConverters::to_write(move || sink_writer.clone()), &m);
    assert_eq!(wait(copied), Ok(IoResult { count: 10_000 }));
    assert_eq!(*writer.out.lock().unwrap(), data);

    let small = Shared {
        out: Arc::new(Mutex::new(Vec::new())),
        limit: 5,
    };
    let written = Source::from_iter(vec![Bytes::from_static(b"abc"), Bytes::from_static(b"def")])
        .run_with(StreamConverters::to_write(move || small.clone()), &m);
    let error = wait(written).unwrap_err();
    let io = IoError::of(&error).unwrap();
    assert_eq!(
        (io.kind(), io.operation()),
        (std::io::ErrorKind::StorageFull, "write")
    );
    assert!(StreamConverters::from_read(|| Cursor::new(Vec::new()), 0).is_err());
    assert!(FileIO::from_path("x", 0).is_err());
    shutdown(&system);
}

/// A file source completes with its last chunk: requesting exactly the
/// chunks there are gives them and the completion, with no further demand
/// (whether the last chunk is short or fills its chunk size).
#[test]
fn a_file_source_completes_with_its_last_chunk() {
    use weir_streams::testkit::TestSink;
    let (system, m) = stream_system("file-complete-with-last");
    let path = TempPath::new("complete-with-last");
    for (len, chunks) in [(10usize, 3usize), (8, 2), (1, 1)] {
        std::fs::write(&path.0, pattern(len)).unwrap();
        let (read, mut probe) = FileIO::from_path(&path.0, 4)
            .unwrap()
            .to_mat(TestSink::probe(), Keep::both)
            .run(&m);
        probe.request(chunks as u64);
        let got = probe.expect_next_n(chunks);
        assert_eq!(got.concat(), pattern(len));
        probe.expect_complete();
        assert_eq!(wait(read), Ok(IoResult { count: len as u64 }));
    }
    shutdown(&system);
}

/// As Pekko's file source: a directory fails the stream when it starts,
/// before anything is requested.
#[test]
fn a_directory_fails_the_file_source_at_start() {
    use weir_streams::testkit::TestSink;
    let (system, m) = stream_system("file-directory");
    let dir = std::env::temp_dir();
    let (read, mut probe) = FileIO::from_path(&dir, 16)
        .unwrap()
        .to_mat(TestSink::probe(), Keep::both)
        .run(&m);
    // No request.
    let error = probe.expect_error();
    let io = IoError::of(&error).expect("an IO error");
    assert_eq!(io.kind(), std::io::ErrorKind::IsADirectory);
    assert_eq!(io.operation(), "open");
    assert_eq!(io.path(), Some(dir.as_path()));
    assert_eq!(IoError::of(&wait(read).unwrap_err()), Some(io));
    shutdown(&system);
}

/// A chunk size is a limit, not an allocation (as `grouped` and `buffer`
/// sizes): a huge one reads the file in chunks no larger than the file.
#[test]
fn a_huge_chunk_size_reads_the_file() {
    let (system, m) = stream_system("file-huge-chunk");
    let path = TempPath::new("huge-chunk");
    let data = pattern(10_000);
    std::fs::write(&path.0, &data).unwrap();
    for chunk_size in [usize::MAX, 1 << 40] {
        let (read, out) = FileIO::from_path(&path.0, chunk_size)
            .unwrap()
            .to_mat(Sink::collect(), Keep::both)
            .run(&m);
        assert_eq!(wait(out).unwrap().concat(), data, "chunk size {chunk_size}");
        assert_eq!(wait(read), Ok(IoResult { count: 10_000 }));
        let read = StreamConverters::from_read(|| Cursor::new(pattern(100)), chunk_size)
            .unwrap()
            .run_with(Sink::collect(), &m);
        assert_eq!(wait(read).unwrap().concat(), pattern(100));
    }
    shutdown(&system);
}
