//! Test probes (feature `testkit`): drive a stage under test from a
//! [`TestSource`] probe and watch it through a [`TestSink`] probe, the way
//! Akka's stream testkit does.
//!
//! Every `expect_*` waits up to the probe's timeout (3 s unless set with
//! `with_timeout`) and panics with a description of what arrived instead:
//! they are test assertions.
//!
//! On a thread that drives a `weir_actor::sim::Simulation`, every wait
//! (`expect_*`, `wait_idle`, `receive_within`, `expect_no_*`) drives the
//! simulation instead of sleeping, its timeout counted on the
//! simulation's clock, as `TestProbe` and a completion's `wait` do: the
//! same probe test runs for real and under any seed.
//!
//! # Examples
//!
//! ```
//! use weir_streams::prelude::*;
//! use weir_streams::testkit::{TestSink, TestSource};
//!
//! let system = weir_actor::ActorSystem::new("probes").unwrap();
//! let materializer = Materializer::new(&system);
//! let (mut up, mut down) = TestSource::probe::<u32>()
//!     .map(|x| x * 10)
//!     .to_mat(TestSink::probe(), Keep::both)
//!     .run(&materializer);
//! down.request(1);
//! up.expect_request();
//! up.send_next(4);
//! assert_eq!(down.expect_next(), 40);
//! up.send_complete();
//! down.expect_complete();
//! system.terminate().wait().unwrap();
//! ```

mod sink_probe;
mod source_probe;
mod wait;

pub use sink_probe::{Received, SinkProbe, TestSink};
pub use source_probe::{DownstreamSignal, SourceProbe, TestSource};

use std::time::Duration;

/// How long an `expect_*` waits by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3);
