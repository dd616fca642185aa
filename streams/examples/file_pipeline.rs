//! A file pipeline: read a log file in chunks, cut it into lines, group
//! the lines by service, summarise each group, and write the summary to
//! another file.
//!
//! It shows `FileIO::from_path` and `FileIO::to_path` (files as byte
//! streams, each on a thread of its own because file IO blocks),
//! `Framing::delimiter` (lines out of chunks, whatever the chunk size),
//! `group_by` with a `fold` per substream, and both files' byte counts as
//! materialized values (`Keep::both`).
//!
//! Run with `cargo run --release --example file_pipeline`.

use std::io::Write;
use std::path::PathBuf;

use weir_streams::io::{Bytes, FileIO, Framing};
use weir_streams::prelude::*;

/// One parsed log line: `<service> <level> <latency in ms>`.
struct Entry {
    service: String,
    error: bool,
    latency_ms: u64,
}

impl Entry {
    /// `None` for a line that does not parse (it is skipped).
    fn parse(line: &[u8]) -> Option<Entry> {
        let line = std::str::from_utf8(line).ok()?;
        let mut fields = line.split_whitespace();
        let service = fields.next()?.to_owned();
        let error = fields.next()? == "ERROR";
        let latency_ms = fields.next()?.parse().ok()?;
        Some(Entry {
            service,
            error,
            latency_ms,
        })
    }
}

/// What a service's substream folds its lines into.
#[derive(Clone, Default)]
struct Summary {
    service: String,
    requests: u64,
    errors: u64,
    total_latency_ms: u64,
    max_latency_ms: u64,
}

impl Summary {
    fn add(mut self, entry: Entry) -> Summary {
        self.service = entry.service;
        self.requests += 1;
        self.errors += u64::from(entry.error);
        self.total_latency_ms += entry.latency_ms;
        self.max_latency_ms = self.max_latency_ms.max(entry.latency_ms);
        self
    }

    fn line(&self) -> String {
        format!(
            "{:<10} requests {:>6}  errors {:>5}  mean {:>4} ms  max {:>4} ms\n",
            self.service,
            self.requests,
            self.errors,
            self.total_latency_ms / self.requests.max(1),
            self.max_latency_ms,
        )
    }
}

/// Writes `lines` made-up log lines to a temporary file (plain `std`: this
/// is the input, not part of the example).
fn generate_log(lines: u64) -> std::io::Result<PathBuf> {
    let path = std::env::temp_dir().join(format!("weir-example-{}.log", std::process::id()));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path)?);
    // (service, its base latency in ms, one error in so many lines)
    let services = [
        ("checkout", 40, 50),
        ("search", 8, 400),
        ("login", 15, 120),
        ("payments", 90, 30),
        ("catalog", 5, 1000),
    ];
    for i in 0..lines {
        let (service, base, one_in) = services[(i * 7 % 5) as usize];
        let level = if (i / 5) % one_in == 0 {
            "ERROR"
        } else {
            "INFO"
        };
        writeln!(file, "{service} {level} {}", base + (i * 31) % (2 * base))?;
    }
    file.flush()?;
    Ok(path)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let input = generate_log(200_000)?;
    let output = input.with_extension("summary");

    let system = weir_actor::ActorSystem::new("file-pipeline")?;
    let materializer = Materializer::new(&system);

    let (read, written) = FileIO::from_path(&input, 64 * 1024)?
        // Chunks of 64 KiB in, one line per element out (without the "\n";
        // a last line without one is kept).
        .via(Framing::delimiter(b"\n", 1024, true)?)
        .filter_map(|line: Bytes| Entry::parse(&line))
        // One substream per service (at most 16), each folded into its
        // summary; the summaries merge back into one stream.
        .group_by(16, |entry: &Entry| entry.service.clone())?
        .fold(Summary::default(), Summary::add)
        .merge_substreams()
        // Sort the handful of summaries so the file reads the same each run.
        .fold(Vec::new(), |mut all, summary| {
            all.push(summary);
            all
        })
        .map_concat(|mut all: Vec<Summary>| {
            all.sort_by(|a, b| a.service.cmp(&b.service));
            all
        })
        .map(|summary| Bytes::from(summary.line()))
        .to_mat(
            FileIO::to_path(&output, FileIO::write_options()),
            Keep::both,
        )
        .run(&materializer);

    // Each completion carries its file's byte count (or an IoError naming
    // the operation and the path).
    let read = read.wait()?;
    let written = written.wait()?;
    println!(
        "read {} bytes from {}, wrote {} bytes to {}:",
        read.count,
        input.display(),
        written.count,
        output.display()
    );
    print!("{}", std::fs::read_to_string(&output)?);

    std::fs::remove_file(&input)?;
    std::fs::remove_file(&output)?;
    system.terminate().wait()?;
    Ok(())
}
