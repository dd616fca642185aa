//! The PingPong workload on Weir and on its Rust peers, side by side.
//!
//! The same shape everywhere: `pairs` client/echo pairs, each client sends a
//! burst of 1000 messages, then one more per reply until its share of
//! `messages` (both directions counted) is done. Each peer runs in its
//! fastest documented configuration on this box; all run in one process,
//! interleaved, and the report gives the median of each and the ratio
//! Weir/peer. Then the same workload with every `Ping` and `Pong` handled
//! by an async handler, against kameo and ractor (whose handlers are
//! `async fn`), see [`async_pingpong`](crate::async_pingpong).
//!
//! Built only with `--features peers`, so the test and lint runs never
//! compile the peers.

#[cfg(feature = "peers")]
mod async_imp;
#[cfg(feature = "peers")]
mod imp;

/// Run the comparison (`weir-bench peers [--messages N] [--async-messages N]
/// [--runs N] [--only sync|async] [--rows TEXT] [--await ready|yield-once]`): the sync PingPong tables, then the
/// async-handler ones (Weir's `run_async_then` against kameo's and ractor's
/// `async fn` handlers; see [`async_pingpong`](crate::async_pingpong)).
pub fn run(args: &[String]) {
    #[cfg(feature = "peers")]
    imp::run(args);
    #[cfg(not(feature = "peers"))]
    {
        let _ = args;
        eprintln!(
            "the peer comparison needs the peers feature:\n  \
             cargo run --release -p weir-benches --features peers --bin weir-bench -- peers"
        );
        std::process::exit(2);
    }
}
