//! Compression flows: gzip and deflate round trips under any chunking (proptest), chunk bounds, and corrupt or truncated input.

use bytes::Bytes;
use proptest::prelude::*;
use weir_streams::io::{Compression, IoError};
use weir_streams::prelude::*;
use weir_tests::{PATIENCE, shutdown, stream_system};

fn run(
    m: &Materializer,
    chunks: Vec<Bytes>,
    flow: Flow<Bytes, Bytes>,
) -> Result<Vec<Bytes>, StreamError> {
    Source::from_iter(chunks)
        .via(flow)
        .run_with(Sink::collect(), m)
        .wait_timeout(PATIENCE)
        .expect("the stream ends")
}

fn cut(input: &[u8], cuts: &[usize]) -> Vec<Bytes> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for c in cuts {
        out.push(Bytes::copy_from_slice(&input[from..c]));
        from = c;
    }
    out.push(Bytes::copy_from_slice(&input[from..]));
    out
}

fn text(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| b"abcabcabd  xyz\n"[i % 15] ^ ((i / 1000) as u8))
        .collect()
}

#[test]
fn gzip_output_is_standard_gzip_and_decompressed_chunks_are_bounded() {
    let (system, m) = stream_system("gzip-std");
    let data = text(100_000);
    let zipped = run(&m, cut(&data, &[10, 5000, 70_000]), Compression::gzip())
        .unwrap()
        .concat();
    assert!(
        zipped.len() < data.len() / 4,
        "compresses: {}",
        zipped.len()
    );
    // flate2's reader (a separate implementation path) reads it back.
    let mut back = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&zipped[..]), &mut back).unwrap();
    assert_eq!(back, data);
    let out = run(
        &m,
        vec![Bytes::from(zipped)],
        Compression::gunzip(1000).unwrap(),
    )
    .unwrap();
    assert!(out.iter().all(|c| c.len() <= 1000));
    assert_eq!(out.concat(), data);
    assert!(Compression::gunzip(0).is_err() && Compression::inflate(0).is_err());
    shutdown(&system);
}

#[test]
fn corrupt_or_truncated_input_fails_with_an_io_error() {
    let (system, m) = stream_system("gzip-bad");
    let data = text(10_000);
    let zipped = run(&m, vec![Bytes::from(data.clone())], Compression::gzip())
        .unwrap()
        .concat();
    let truncated = Bytes::copy_from_slice(&zipped[..zipped.len() - 5]);
    let error = run(&m, vec![truncated], Compression::gunzip(4096).unwrap()).unwrap_err();
    assert_eq!(IoError::of(&error).map(IoError::operation), Some("gunzip"));

    let deflated = run(&m, vec![Bytes::from(data)], Compression::deflate())
        .unwrap()
        .concat();
    let truncated = Bytes::copy_from_slice(&deflated[..deflated.len() / 2]);
    let error = run(&m, vec![truncated], Compression::inflate(4096).unwrap()).unwrap_err();
    let io = IoError::of(&error).unwrap();
    assert_eq!(
        (io.operation(), io.kind()),
        ("inflate", std::io::ErrorKind::UnexpectedEof)
    );

    let garbage = Bytes::from_static(b"\xff\xfe this is not deflate at all");
    let error = run(
        &m,
        vec![garbage.clone()],
        Compression::inflate(4096).unwrap(),
    )
    .unwrap_err();
    assert_eq!(
        IoError::of(&error).map(IoError::kind),
        Some(std::io::ErrorKind::InvalidData)
    );
    assert!(run(&m, vec![garbage], Compression::gunzip(4096).unwrap()).is_err());
    shutdown(&system);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn gzip_and_deflate_round_trip_under_any_chunking(
        data in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 0..3000),
        cuts_in in proptest::collection::vec(0usize..4000, 0..10),
        cuts_out in proptest::collection::vec(0usize..4000, 0..10),
        level in 0u32..10,
        max_chunk in 1usize..500,
    ) {
        let (system, m) = stream_system("compression-prop");
        let zipped = run(&m, cut(&data, &cuts_in), Compression::gzip_level(level)).unwrap().concat();
        let back = run(&m, cut(&zipped, &cuts_out), Compression::gunzip(max_chunk).unwrap()).unwrap();
        prop_assert!(back.iter().all(|c| c.len() <= max_chunk));
        prop_assert_eq!(back.concat(), data.clone());

        let deflated = run(&m, cut(&data, &cuts_in), Compression::deflate_level(level)).unwrap().concat();
        let back = run(&m, cut(&deflated, &cuts_out), Compression::inflate(max_chunk).unwrap()).unwrap();
        prop_assert_eq!(back.concat(), data);
        shutdown(&system);
    }
}

/// Feed `chunks` one at a time to `decoder`, flushing: after chunk k
/// it has given back exactly elements 0..=k.
fn decodes_each<W: std::io::Write>(
    mut decoder: W,
    out: fn(&W) -> &Vec<u8>,
    elements: &[Bytes],
    chunks: &[Bytes],
) {
    let mut expected = Vec::new();
    for (k, (element, chunk)) in elements.iter().zip(chunks).enumerate() {
        expected.extend_from_slice(element);
        decoder.write_all(chunk).unwrap();
        decoder.flush().unwrap();
        assert_eq!(out(&decoder), &expected, "after chunk {k}");
    }
}

/// Each chunk of a flushed encoder decompresses completely: the chunks
/// out up to element k give elements 0..=k back, without the rest.
#[test]
fn flushed_encoders_make_every_element_decodable_at_once() {
    let (system, m) = stream_system("compression-flushed");
    let elements: Vec<Bytes> = (0..20)
        .map(|i| Bytes::from(format!("line {i}: {}\n", "x".repeat(i * 7))))
        .collect();
    let gzip = run(&m, elements.clone(), Compression::gzip_flushed(6)).expect("compresses");
    assert_eq!(
        gzip.len(),
        elements.len() + 1,
        "a chunk each, and the trailer"
    );
    decodes_each(
        flate2::write::GzDecoder::new(Vec::new()),
        |d| d.get_ref(),
        &elements,
        &gzip,
    );
    let deflate = run(&m, elements.clone(), Compression::deflate_flushed(9)).expect("compresses");
    decodes_each(
        flate2::write::DeflateDecoder::new(Vec::new()),
        |d| d.get_ref(),
        &elements,
        &deflate,
    );
    // And the whole still round-trips.
    let back = run(&m, gzip, Compression::gunzip(4096).unwrap()).expect("decompresses");
    assert_eq!(back.concat(), elements.concat());
    shutdown(&system);
}

/// A gzip file may hold several members one after another (RFC 1952,
/// `cat a.gz b.gz`): gunzip decodes every member, however the input is cut.
#[test]
fn gunzip_decodes_every_member_of_a_multi_member_file() {
    let (system, m) = stream_system("gunzip-members");
    let (a, b) = (text(3_000), b"and the second member\n".to_vec());
    let gz = |data: &[u8]| run(&m, vec![Bytes::copy_from_slice(data)], Compression::gzip());
    let members = [gz(&a).unwrap().concat(), gz(&b).unwrap().concat()].concat();
    for cuts in [&[][..], &[1], &[200, 1_000], &[members.len() - 30]] {
        let out = run(
            &m,
            cut(&members, cuts),
            Compression::gunzip(1 << 16).unwrap(),
        );
        assert_eq!(out.map(|c| c.concat()), Ok([a.clone(), b.clone()].concat()));
    }
    shutdown(&system);
}

/// Bytes after the end of the compressed stream are not dropped silently:
/// they fail the stream with an IO error naming the decoder.
#[test]
fn trailing_garbage_after_the_compressed_stream_fails() {
    let (system, m) = stream_system("trailing-garbage");
    let data = text(1_000);
    let cases = [
        (
            Compression::gzip(),
            Compression::gunzip(1 << 16).unwrap(),
            "gunzip",
        ),
        (
            Compression::deflate(),
            Compression::inflate(1 << 16).unwrap(),
            "inflate",
        ),
    ];
    for (encode, decode, name) in cases {
        let packed = run(&m, vec![Bytes::from(data.clone())], encode)
            .unwrap()
            .concat();
        let garbage = [packed, b"garbage after the end".to_vec()].concat();
        for chunks in [
            vec![Bytes::from(garbage.clone())],
            cut(&garbage, &[garbage.len() - 21]),
        ] {
            let error = run(&m, chunks, decode.clone()).unwrap_err();
            let io =
                IoError::of(&error).unwrap_or_else(|| panic!("{name}: an IO error, not {error}"));
            assert_eq!(io.operation(), name);
        }
    }
    shutdown(&system);
}
