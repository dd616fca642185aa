//! StreamConverters::as_read and as_write: blocking readers and writers on a stream, with back-pressure both ways.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use weir_streams::io::StreamConverters;
use weir_streams::prelude::*;
use weir_tests::{PATIENCE, QUIET, eventually, shutdown, stream_system};

#[test]
fn as_read_reads_the_stream_then_zero() {
    let (system, m) = stream_system("as-read");
    let chunks: Vec<Bytes> = (0..100u8)
        .map(|i| Bytes::from(vec![i; i as usize]))
        .collect();
    let expected: Vec<u8> = chunks.concat();
    let mut reader = Source::from_iter(chunks).run_with(StreamConverters::as_read(), &m);
    let mut out = Vec::new();
    reader.read_to_end(&mut out).unwrap();
    assert_eq!(out, expected);
    assert_eq!(reader.read(&mut [0; 8]).unwrap(), 0);
    shutdown(&system);
}

#[test]
fn as_read_reports_a_failed_stream_as_an_error() {
    let (system, m) = stream_system("as-read-fail");
    let mut reader = Source::from_iter(vec![Ok(Bytes::from_static(b"ab")), Err(())])
        .map(|r: Result<Bytes, ()>| r.unwrap_or_else(|()| panic!("boom")))
        .run_with(StreamConverters::as_read(), &m);
    let mut out = Vec::new();
    let error = reader.read_to_end(&mut out).unwrap_err();
    assert_eq!(out, b"ab");
    assert!(error.to_string().contains("boom"), "{error}");
    shutdown(&system);
}

#[test]
fn as_read_pulls_only_what_is_read() {
    let (system, m) = stream_system("as-read-backpressure");
    let made = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&made);
    let mut reader = Source::repeat(())
        .map(move |()| {
            counter.fetch_add(1, Ordering::SeqCst);
            Bytes::from_static(b"0123456789")
        })
        .run_with(StreamConverters::as_read(), &m);
    let mut buf = [0u8; 25];
    reader.read_exact(&mut buf).unwrap();
    assert!(made.load(Ordering::SeqCst) >= 3);
    // A bounded wait: nothing more is made while nobody reads.
    assert!(!eventually(QUIET, || made.load(Ordering::SeqCst) > 4));
    drop(reader);
    shutdown(&system);
}

#[test]
fn as_read_times_out_and_dropping_the_reader_cancels() {
    let (system, m) = stream_system("as-read-timeout");
    let (queue, mut reader) = Source::<Bytes, _>::queue(4)
        .unwrap()
        .to_mat(
            StreamConverters::as_read_with_timeout(Duration::from_millis(50)),
            Keep::both,
        )
        .run(&m);
    let error = reader.read(&mut [0; 4]).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    assert!(
        eventually(PATIENCE, || queue.is_closed()),
        "the timed-out reader cancelled the stream"
    );

    let (queue, reader) = Source::<Bytes, _>::queue(4)
        .unwrap()
        .to_mat(StreamConverters::as_read(), Keep::both)
        .run(&m);
    assert!(!queue.is_closed());
    drop(reader);
    assert!(
        eventually(PATIENCE, || queue.is_closed()),
        "dropping the reader cancelled the stream"
    );
    shutdown(&system);
}

#[test]
fn as_write_into_as_read_copies_with_back_pressure() {
    let (system, m) = stream_system("as-write");
    let (mut writer, mut reader) = StreamConverters::as_write(2)
        .unwrap()
        .to_mat(StreamConverters::as_read(), Keep::both)
        .run(&m);
    let written = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&written);
    let producer = std::thread::spawn(move || {
        for i in 0..50u8 {
            writer.write_all(&[i; 100]).unwrap();
            count.fetch_add(1, Ordering::SeqCst);
        }
        // Dropping the writer completes the stream.
    });
    // Nobody reads yet: the writer stops after the queue and the stages fill.
    assert!(eventually(PATIENCE, || written.load(Ordering::SeqCst) >= 2));
    // A bounded wait: the writer stays blocked while nobody reads.
    assert!(!eventually(QUIET, || written.load(Ordering::SeqCst) > 4));
    let mut out = Vec::new();
    reader.read_to_end(&mut out).unwrap();
    producer.join().unwrap();
    let expected: Vec<u8> = (0..50u8).flat_map(|i| [i; 100]).collect();
    assert_eq!(out, expected);
    shutdown(&system);
}

#[test]
fn as_write_after_the_stream_ended_is_a_broken_pipe() {
    let (system, m) = stream_system("as-write-broken");
    let mut writer = StreamConverters::as_write(1)
        .unwrap()
        .to(Sink::cancelled())
        .run(&m);
    assert!(eventually(PATIENCE, || writer.write(b"x").is_err()));
    assert_eq!(
        writer.write(b"x").unwrap_err().kind(),
        std::io::ErrorKind::BrokenPipe
    );
    assert!(StreamConverters::as_write(0).is_err());
    shutdown(&system);
}

#[test]
fn readers_writers_and_errors_cross_threads() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<weir_streams::io::StreamReader>();
    send::<weir_streams::io::StreamWriter>();
    send_sync::<weir_streams::io::IoError>();
    send_sync::<weir_streams::io::FramingError>();
    send_sync::<weir_streams::io::IoResult>();
}
