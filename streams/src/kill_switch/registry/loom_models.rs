//! Loom models of a shared kill switch's registry (module docs of
//! `kill_switch::registry`): streams joining and leaving while it fires.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p weir-streams --release --lib kill_switch`.
//! A stream is a counter of the kills it received.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::{Joined, Registry};

#[derive(Default)]
struct Stream(AtomicUsize);

impl Stream {
    fn kill(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    fn kills(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

type Switch = Registry<Arc<Stream>, u8>;

/// Materialize a stream under the switch: join, and apply the kill at
/// once if it has fired. The key to leave with, if kept.
fn materialize(switch: &Switch, stream: &Arc<Stream>) -> Option<u64> {
    match switch.join(Arc::clone(stream)) {
        Joined::Member(key) => Some(key),
        Joined::Fired(_) => {
            stream.kill();
            None
        }
    }
}

fn fire(switch: &Switch) {
    for stream in switch.fire(&1) {
        stream.kill();
    }
}

/// A stream materialized while the switch fires (and another already
/// running) gets the kill exactly once; nothing is kept afterwards.
#[test]
fn streams_joining_while_it_fires_are_killed_once() {
    loom::model(|| {
        let switch = Arc::new(Switch::new());
        let running = Arc::new(Stream::default());
        materialize(&switch, &running).expect("not fired yet");
        let late = Arc::new(Stream::default());
        let joiner = {
            let (switch, late) = (Arc::clone(&switch), Arc::clone(&late));
            thread::spawn(move || materialize(&switch, &late))
        };
        fire(&switch);
        joiner.join().unwrap();
        assert_eq!(running.kills(), 1);
        assert_eq!(
            late.kills(),
            1,
            "joined around the firing: killed exactly once"
        );
        assert_eq!(switch.len(), 0, "nothing kept after firing");
    });
}

/// Streams that start and stop on two threads while a third runs: the
/// stopped ones are forgotten (the registry holds running streams only),
/// and a firing after that reaches the running one alone.
#[test]
fn streams_that_stop_are_forgotten() {
    loom::model(|| {
        let switch = Arc::new(Switch::new());
        let running = Arc::new(Stream::default());
        materialize(&switch, &running).expect("not fired yet");
        let stopped: Vec<_> = (0..2)
            .map(|_| {
                let switch = Arc::clone(&switch);
                thread::spawn(move || {
                    let stream = Arc::new(Stream::default());
                    let key = materialize(&switch, &stream).expect("not fired yet");
                    switch.leave(key);
                    stream
                })
            })
            .collect();
        let stopped: Vec<_> = stopped.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(switch.len(), 1, "only the running stream is kept");
        fire(&switch);
        assert_eq!(running.kills(), 1);
        assert!(
            stopped.iter().all(|s| s.kills() == 0),
            "a stopped stream gets no kill"
        );
    });
}
