//! The second process of the `nats_stream_refs` tests (feature `nats`):
//! one end of a stream ref, in its own OS process, so that the test can
//! kill it mid-stream.
//!
//! ```text
//! weir-nats-peer-refs <url> <heartbeat-ms> <timeout-ms> produce <inbox-uri> [count]
//! weir-nats-peer-refs <url> <heartbeat-ms> <timeout-ms> consume
//! ```
//!
//! - `produce`: makes a source ref of the numbers 0, 1, 2, ... (`count` of
//!   them, or for ever) and tells it to the actor at `<inbox-uri>` (which
//!   takes `SourceRef<u64>`); prints `sent`.
//! - `consume`: exposes an actor `inbox` taking `SourceRef<u64>`, prints
//!   `ready <uri>`, and runs every ref it gets into a sink that checks the
//!   numbers come in order; prints `done <outcome>` when a stream ends.
//!
//! Either way it then runs until it is killed.

use std::time::Duration;

use weir_actor::{Actor, ActorSystem, Context, Props};
use weir_interop::{Nats, RemoteActorSystem, RemoteSettings, SourceRef, StreamRefs};
use weir_streams::prelude::*;

/// Runs the source refs it is told.
struct Inbox {
    refs: StreamRefs,
    materializer: Materializer,
}

impl Actor for Inbox {
    type Msg = SourceRef<u64>;
    fn receive(&mut self, _: &mut Context<Self>, source_ref: SourceRef<u64>) {
        let done = source_ref.source(&self.refs).run_with(
            Sink::fold(Ok(0u64), |next: Result<u64, String>, x: u64| match next {
                Ok(n) if n == x => Ok(n + 1),
                Ok(n) => Err(format!("expected {n}, got {x}")),
                Err(e) => Err(e),
            }),
            &self.materializer,
        );
        std::thread::spawn(move || println!("done {:?}", done.wait()));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: weir-nats-peer-refs <url> <heartbeat-ms> <timeout-ms> produce <inbox-uri> [count] | consume";
    let (Some(url), Some(beat), Some(timeout), Some(mode)) =
        (args.first(), args.get(1), args.get(2), args.get(3))
    else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let millis = |s: &str| Duration::from_millis(s.parse().expect("milliseconds"));
    let settings = RemoteSettings::default().heartbeat(millis(beat), millis(timeout));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let nats = Nats::connect(runtime.handle(), url).expect("connects");
    let system = ActorSystem::new(&format!("refs-peer-{mode}")).expect("a valid name");
    let remote = RemoteActorSystem::start(&system, &nats, settings).expect("serves");
    let refs = StreamRefs::new(&remote);
    let materializer = Materializer::new(&system);
    match (mode.as_str(), args.get(4)) {
        ("produce", Some(inbox)) => {
            let count = args
                .get(5)
                .map_or(u64::MAX, |n| n.parse().expect("a count"));
            let source_ref = Source::from_iter(0..count).run_with(refs.source_ref(), &materializer);
            let inbox = remote
                .resolve::<SourceRef<u64>>(inbox)
                .expect("a valid uri");
            inbox.tell(source_ref).expect("encodes");
            println!("sent");
        }
        ("consume", None) => {
            let (refs, materializer) = (refs.clone(), materializer.clone());
            let inbox = system
                .spawn(
                    Props::new(move || Inbox {
                        refs: refs.clone(),
                        materializer: materializer.clone(),
                    }),
                    "inbox",
                )
                .expect("spawned");
            let uri = remote.expose(&inbox, "inbox").expect("exposed");
            println!("ready {uri}");
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
    // Until killed.
    loop {
        std::thread::park();
    }
}
