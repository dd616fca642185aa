//! Framing flows: frames, typed errors with offsets, zero copy, and chunking-independence (proptest).

use bytes::Bytes;
use proptest::prelude::*;
use weir_streams::io::{ByteOrder, Framing, FramingError, JsonFraming};
use weir_streams::prelude::*;
use weir_tests::{PATIENCE, shutdown};

type Framed = Result<Vec<Bytes>, FramingError>;

/// A materializer with fusion on (a framing flow into a folding sink runs
/// as one fused sink stage) and one with it off (two stages).
struct Both {
    fused: Materializer,
    unfused: Materializer,
}

fn stream_system(name: &str) -> (weir_actor::ActorSystem, Both) {
    let system = weir_actor::ActorSystem::new(name).expect("a valid system name");
    let both = Both {
        fused: Materializer::new(&system),
        unfused: Materializer::builder(&system).fusion(false).build(),
    };
    (system, both)
}

/// The frames (or the error and the stage it names) on one materializer.
fn run_on(
    materializer: &Materializer,
    chunks: Vec<Bytes>,
    flow: Flow<Bytes, Bytes>,
) -> Result<Vec<Bytes>, (FramingError, Option<String>)> {
    let done = Source::from_iter(chunks)
        .via(flow)
        .run_with(Sink::collect(), materializer);
    match done.wait_timeout(PATIENCE).expect("the stream ends") {
        Ok(frames) => Ok(frames),
        Err(error) => Err((
            FramingError::of(&error)
                .unwrap_or_else(|| panic!("a framing error, not {error}"))
                .clone(),
            error.stage().map(str::to_owned),
        )),
    }
}

/// The frames, fused and unfused alike (the same error naming the same stage).
fn run(both: &Both, chunks: Vec<Bytes>, flow: Flow<Bytes, Bytes>) -> Framed {
    let fused = run_on(&both.fused, chunks.clone(), flow.clone());
    let unfused = run_on(&both.unfused, chunks, flow);
    assert_eq!(fused, unfused, "fused and unfused framing agree");
    fused.map_err(|(error, _)| error)
}

fn chunks(parts: &[&'static [u8]]) -> Vec<Bytes> {
    parts.iter().map(|p| Bytes::from_static(p)).collect()
}

fn frames(parts: &[&'static [u8]]) -> Framed {
    Ok(chunks(parts))
}

/// `input` cut at `cuts` (positions, any order, repeats make empty chunks).
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

#[test]
fn delimiter_frames_across_chunks_and_multi_byte_delimiters() {
    let (system, m) = stream_system("delimiter");
    let crlf = || Framing::delimiter(b"\r\n", 16, false).unwrap();
    let input = chunks(&[b"ab\r", b"\ncd\r\n\r\nef", b"\r", b"\n"]);
    assert_eq!(run(&m, input, crlf()), frames(&[b"ab", b"cd", b"", b"ef"]));
    let nl = || Framing::delimiter(b"\n", 16, true).unwrap();
    assert_eq!(run(&m, chunks(&[b"a\nb"]), nl()), frames(&[b"a", b"b"]));
    assert_eq!(run(&m, chunks(&[]), nl()), frames(&[]));
    shutdown(&system);
}

#[test]
fn delimiter_errors_say_which_and_where() {
    let (system, m) = stream_system("delimiter-errors");
    let strict = || Framing::delimiter(b"\n", 4, false).unwrap();
    assert_eq!(
        run(&m, chunks(&[b"ab\ncd"]), strict()),
        Err(FramingError::Truncated {
            offset: 3,
            length: 2
        })
    );
    // The too-long frame starts at byte 5; found before its delimiter arrives.
    assert_eq!(
        run(&m, chunks(&[b"abcd\nefg", b"hij"]), strict()),
        Err(FramingError::FrameTooLong {
            offset: 5,
            maximum: 4
        })
    );
    let lenient = || Framing::delimiter(b"\n", 4, true).unwrap();
    assert_eq!(
        run(&m, chunks(&[b"a\nbcdefg"]), lenient()),
        Err(FramingError::FrameTooLong {
            offset: 2,
            maximum: 4
        })
    );
    assert!(matches!(
        Framing::delimiter(b"", 4, true),
        Err(weir_streams::ArgumentError::Zero {
            argument: "delimiter"
        })
    ));
    shutdown(&system);
}

#[test]
fn a_frame_within_one_chunk_is_a_slice_of_it() {
    let (system, m) = stream_system("zero-copy");
    let chunk = Bytes::from(b"alpha\nbeta\ngam".to_vec());
    let second = Bytes::from(b"ma\ndelta\n".to_vec());
    let within = |frame: &Bytes, chunk: &Bytes| {
        let range = chunk.as_ptr() as usize..chunk.as_ptr() as usize + chunk.len();
        range.contains(&(frame.as_ptr() as usize))
    };
    for materializer in [&m.fused, &m.unfused] {
        let out = run_on(
            materializer,
            vec![chunk.clone(), second.clone()],
            Framing::delimiter(b"\n", 64, false).unwrap(),
        )
        .unwrap();
        assert_eq!(out, chunks(&[b"alpha", b"beta", b"gamma", b"delta"]));
        assert!(within(&out[0], &chunk) && within(&out[1], &chunk));
        // "gamma" spans the two chunks: a copy.
        assert!(!within(&out[2], &chunk) && !within(&out[2], &second));
        assert!(within(&out[3], &second));
    }
    shutdown(&system);
}

/// Into a folding sink (one fused stage) as through two stages: a sink
/// that stops after two frames takes no more, and the frames before an
/// error reach the sink before the error does.
#[test]
fn framing_into_a_sink_stops_and_fails_as_two_stages_would() {
    let (system, m) = stream_system("fused-sink");
    for materializer in [&m.fused, &m.unfused] {
        let input = chunks(&[b"a\nb\nc\nd", b"\ne\n"]);
        let two = Source::from_iter(input)
            .via(Framing::delimiter(b"\n", 8, false).unwrap())
            .take(2)
            .run_with(Sink::collect(), materializer);
        assert_eq!(
            two.wait_timeout(PATIENCE).unwrap(),
            Ok(chunks(&[b"a", b"b"]))
        );

        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&seen);
        let failed = Source::from_iter(chunks(&[b"ab\ncd\nefg", b"hijk\nl\n"]))
            .via(Framing::delimiter(b"\n", 4, false).unwrap())
            .run_with(
                Sink::for_each(move |frame: Bytes| log.lock().unwrap().push(frame)),
                materializer,
            );
        let error = failed.wait_timeout(PATIENCE).unwrap().unwrap_err();
        assert_eq!(
            FramingError::of(&error),
            Some(&FramingError::FrameTooLong {
                offset: 6,
                maximum: 4
            })
        );
        assert_eq!(error.stage(), Some("delimiter-framing"));
        assert_eq!(*seen.lock().unwrap(), chunks(&[b"ab", b"cd"]));
    }
    shutdown(&system);
}

#[test]
fn length_field_frames_in_either_byte_order_with_an_offset() {
    let (system, m) = stream_system("length-field");
    let big = Framing::length_field(2, 1, 64, ByteOrder::BigEndian).unwrap();
    let input = chunks(&[b"X\x00\x02hiY\x00", b"\x01!"]);
    assert_eq!(
        run(&m, input, big),
        frames(&[b"X\x00\x02hi", b"Y\x00\x01!"])
    );
    let little = Framing::length_field(3, 0, 64, ByteOrder::LittleEndian).unwrap();
    assert_eq!(
        run(&m, chunks(&[b"\x01\x00\x00a\x00\x00\x00"]), little),
        frames(&[b"\x01\x00\x00a", b"\x00\x00\x00"])
    );
    // The length field counts the whole frame.
    let whole =
        Framing::length_field_with(1, 0, 64, ByteOrder::BigEndian, |_, len| len as usize).unwrap();
    assert_eq!(
        run(&m, chunks(&[b"\x03ab\x01"]), whole),
        frames(&[b"\x03ab", b"\x01"])
    );
    shutdown(&system);
}

#[test]
fn length_field_errors_say_which_and_where() {
    let (system, m) = stream_system("length-field-errors");
    let one = || Framing::length_field(1, 0, 8, ByteOrder::BigEndian).unwrap();
    assert_eq!(
        run(&m, chunks(&[b"\x01a\x09"]), one()),
        Err(FramingError::FrameTooLong {
            offset: 2,
            maximum: 8
        })
    );
    assert_eq!(
        run(&m, chunks(&[b"\x01a\x03bc"]), one()),
        Err(FramingError::Truncated {
            offset: 2,
            length: 3
        })
    );
    let malformed =
        Framing::length_field_with(1, 1, 8, ByteOrder::BigEndian, |_, len| len as usize).unwrap();
    assert_eq!(
        run(&m, chunks(&[b"\x00\x01"]), malformed),
        Err(FramingError::MalformedLength { offset: 0, size: 1 })
    );
    assert!(Framing::length_field(0, 0, 8, ByteOrder::BigEndian).is_err());
    assert!(Framing::length_field(9, 0, 8, ByteOrder::BigEndian).is_err());
    shutdown(&system);
}

#[test]
fn simple_framing_protocol_round_trips_and_bounds_messages() {
    let (system, m) = stream_system("simple-protocol");
    let messages = chunks(&[b"hello", b"", b"world!"]);
    let encoded = run(
        &m,
        messages.clone(),
        Framing::simple_framing_protocol_encoder(8),
    )
    .unwrap();
    assert_eq!(encoded[0], Bytes::from_static(b"\x00\x00\x00\x05hello"));
    let wire: Vec<u8> = encoded.concat();
    let decoded = run(
        &m,
        cut(&wire, &[1, 6, 7, 12]),
        Framing::simple_framing_protocol_decoder(8),
    );
    assert_eq!(decoded, Ok(messages));
    assert_eq!(
        run(
            &m,
            chunks(&[b"ok", b"too long!"]),
            Framing::simple_framing_protocol_encoder(8)
        ),
        Err(FramingError::MessageTooLong {
            offset: 1,
            length: 9,
            maximum: 8
        })
    );
    assert_eq!(
        run(
            &m,
            chunks(&[b"\x00\x00\x00\x09"]),
            Framing::simple_framing_protocol_decoder(8)
        ),
        Err(FramingError::FrameTooLong {
            offset: 0,
            maximum: 12
        })
    );
    shutdown(&system);
}

#[test]
fn json_scanner_emits_top_level_objects() {
    let (system, m) = stream_system("json");
    let input = chunks(&[
        br#" [ {"a": {"b": "}{\"" }}, {"#,
        br#""c":[1,2]} ] {"d":0}"#,
    ]);
    assert_eq!(
        run(&m, input, JsonFraming::object_scanner(64)),
        frames(&[
            br#"{"a": {"b": "}{\"" }}"#,
            br#"{"c":[1,2]}"#,
            br#"{"d":0}"#
        ])
    );
    assert_eq!(
        run(
            &m,
            chunks(&[br#"{"a":1} 42"#]),
            JsonFraming::object_scanner(64)
        ),
        Err(FramingError::InvalidByte {
            offset: 8,
            byte: b'4'
        })
    );
    assert_eq!(
        run(
            &m,
            chunks(&[br#"{"a":1}, {"b":"#]),
            JsonFraming::object_scanner(64)
        ),
        Err(FramingError::Truncated {
            offset: 9,
            length: 5
        })
    );
    assert_eq!(
        run(
            &m,
            chunks(&[br#"{"a":1}, {"b":"long"}"#]),
            JsonFraming::object_scanner(8)
        ),
        Err(FramingError::FrameTooLong {
            offset: 9,
            maximum: 8
        })
    );
    shutdown(&system);
}

/// What delimiter framing should give (frames no longer than the maximum).
fn delimiter_model(input: &[u8], delimiter: &[u8], truncation: bool) -> Framed {
    let mut out = Vec::new();
    let mut from = 0;
    let mut i = 0;
    while i + delimiter.len() <= input.len() {
        if &input[i..i + delimiter.len()] == delimiter {
            out.push(Bytes::copy_from_slice(&input[from..i]));
            i += delimiter.len();
            from = i;
        } else {
            i += 1;
        }
    }
    if from < input.len() {
        if !truncation {
            return Err(FramingError::Truncated {
                offset: from as u64,
                length: input.len() - from,
            });
        }
        out.push(Bytes::copy_from_slice(&input[from..]));
    }
    Ok(out)
}

fn cases() -> ProptestConfig {
    ProptestConfig::with_cases(64)
}

proptest! {
    #![proptest_config(cases())]

    /// Lines of a/b (short of the maximum) cut anywhere: the model's frames.
    #[test]
    fn delimiter_framing_does_not_depend_on_chunking(
        input in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'\n'), Just(b'\r')], 0..200),
        cuts in proptest::collection::vec(0usize..1000, 0..12),
        crlf in any::<bool>(),
        truncation in any::<bool>(),
        maximum in 0usize..12,
    ) {
        let (system, m) = stream_system("delimiter-prop");
        let delimiter: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        let flow = || Framing::delimiter(delimiter, maximum, truncation).unwrap();
        let whole = run(&m, vec![Bytes::from(input.clone())], flow());
        let pieces = run(&m, cut(&input, &cuts), flow());
        prop_assert_eq!(&pieces, &whole);
        // The model knows no maximum: compare where every segment fits.
        let fits = input.split(|&b| b == b'\n').all(|s| s.len() <= maximum);
        if fits && !crlf {
            prop_assert_eq!(&whole, &delimiter_model(&input, delimiter, truncation));
        }
        shutdown(&system);
    }

    #[test]
    fn length_field_framing_does_not_depend_on_chunking(
        input in proptest::collection::vec(0u8..6, 0..120),
        cuts in proptest::collection::vec(0usize..1000, 0..12),
        offset in 0usize..3,
        little in any::<bool>(),
    ) {
        let (system, m) = stream_system("length-prop");
        let order = if little { ByteOrder::LittleEndian } else { ByteOrder::BigEndian };
        let flow = || Framing::length_field(2, offset, 300, order).unwrap();
        let whole = run(&m, vec![Bytes::from(input.clone())], flow());
        prop_assert_eq!(run(&m, cut(&input, &cuts), flow()), whole);
        shutdown(&system);
    }

    #[test]
    fn simple_protocol_round_trips_under_any_chunking(
        messages in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..12),
        cuts in proptest::collection::vec(0usize..1000, 0..12),
    ) {
        let (system, m) = stream_system("simple-prop");
        let messages: Vec<Bytes> = messages.into_iter().map(Bytes::from).collect();
        let wire = run(&m, messages.clone(), Framing::simple_framing_protocol_encoder(64)).unwrap().concat();
        let decoded = run(&m, cut(&wire, &cuts), Framing::simple_framing_protocol_decoder(64));
        prop_assert_eq!(decoded, Ok(messages));
        shutdown(&system);
    }

    #[test]
    fn json_framing_does_not_depend_on_chunking(
        input in proptest::collection::vec(prop_oneof![
            Just(b'{'), Just(b'}'), Just(b'"'), Just(b'\\'), Just(b'['), Just(b']'), Just(b','), Just(b' '), Just(b'x')
        ], 0..120),
        cuts in proptest::collection::vec(0usize..1000, 0..12),
    ) {
        let (system, m) = stream_system("json-prop");
        let flow = || JsonFraming::object_scanner(40);
        let whole = run(&m, vec![Bytes::from(input.clone())], flow());
        prop_assert_eq!(run(&m, cut(&input, &cuts), flow()), whole);
        shutdown(&system);
    }
}

/// The framings under test for signal timing, each with one chunk of five frames.
fn five_frame_cases() -> Vec<(&'static str, Flow<Bytes, Bytes>, Bytes)> {
    vec![
        (
            "delimiter",
            Framing::delimiter(b"\n", 64, false).unwrap(),
            Bytes::from_static(b"a\nb\nc\nd\ne\n"),
        ),
        (
            "delimiter, the last frame truncated",
            Framing::delimiter(b"\n", 64, true).unwrap(),
            Bytes::from_static(b"a\nb\nc\nd\ne"),
        ),
        (
            "length field",
            Framing::length_field(1, 0, 64, ByteOrder::BigEndian).unwrap(),
            Bytes::from_static(b"\x01a\x01b\x01c\x01d\x01e"),
        ),
        (
            "json",
            JsonFraming::object_scanner(64),
            Bytes::from_static(b"{\"a\":1} {}\n{} {}{\"e\":[]}\n"),
        ),
    ]
}

/// One chunk of five frames, then upstream's end: five requests give the
/// five frames and the completion, with no sixth request.
#[test]
fn framing_completes_with_its_last_frame_when_upstream_has_finished() {
    use weir_streams::testkit::TestSink;
    let (system, m) = stream_system("framing-complete-with-last");
    for materializer in [&m.fused, &m.unfused] {
        for (_, flow, chunk) in five_frame_cases() {
            let mut probe = Source::single(chunk)
                .via(flow)
                .run_with(TestSink::probe(), materializer);
            for _ in 0..5 {
                probe.request(1);
                probe.expect_next();
            }
            probe.wait_idle();
            // The stream has completed already: no further demand needed.
            probe.expect_complete();
        }
    }
    shutdown(&system);
}

/// Upstream ends after the last frame has gone out: the stage completes at
/// once, without waiting for another pull.
#[test]
fn framing_completes_when_upstream_ends_after_its_last_frame() {
    use weir_streams::testkit::{TestSink, TestSource};
    let (system, m) = stream_system("framing-complete-after-last");
    for materializer in [&m.fused, &m.unfused] {
        // Five whole frames (a truncated last one goes out only at the end).
        let whole = five_frame_cases()
            .into_iter()
            .filter(|(name, ..)| !name.contains("truncated"));
        for (name, flow, chunk) in whole {
            let (mut source, mut sink) = TestSource::probe::<Bytes>()
                .via(flow)
                .to_mat(TestSink::probe(), Keep::both)
                .run(materializer);
            sink.request(5);
            source.expect_request();
            source.send_next(chunk);
            assert_eq!(sink.expect_next_n(5).len(), 5, "{name}");
            source.send_complete();
            sink.expect_complete();
        }
    }
    shutdown(&system);
}
