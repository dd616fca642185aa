//! Operators: [`FlowOps`] (element-wise), [`AsyncOps`] (a future per
//! element), [`SubstreamOps`] (nesting),
//! [`TimeOps`] (time-based), [`RateOps`] (rate decoupling),
//! [`StatefulOps`] (state carried across elements) and
//! [`ErrorOps`] (failure handling), which every
//! `Source` and `Flow` has; and the sources and sinks.
//!
//! One operator (or one tight family) per file; the trait files hold the
//! documented methods, each building its stage from its operator's file.

mod aggregate_with_boundary;
mod async_ops;
mod async_sources;
mod batch;
mod buffer;
mod context;
mod cycle;
mod delay;
mod error_ops;
mod errors;
mod flatten;
mod flow_ops;
mod grouped;
mod grouped_within;
mod intersperse;
mod limit;
#[cfg(feature = "tracing")]
mod log;
mod map_async;
mod map_async_partitioned;
mod map_concat;
mod rate_ops;
mod recover;
mod restart;
mod restart_flow;
mod restart_sink;
mod retry_flow;
mod scan;
mod scan_async;
mod simple;
mod sink_and_source;
mod sinks;
mod sources;
mod stateful_map;
mod stateful_ops;
mod sub_island;
mod sub_source;
mod substream_ops;
mod substreams;
mod throttle;
mod tick;
mod time_ops;
mod timeout;
mod unfold_resource_async;
mod util;
mod watch;

pub use async_ops::AsyncOps;
pub use context::{ContextOps, FlowWithContext, SourceWithContext};
pub use delay::DelayOverflowStrategy;
pub use error_ops::ErrorOps;
pub use flow_ops::FlowOps;
pub use rate_ops::RateOps;
pub use restart::{RestartSettings, RestartSource, Restarts};
pub use restart_flow::RestartFlow;
pub use restart_sink::RestartSink;
pub use retry_flow::RetryFlow;
pub use stateful_ops::StatefulOps;
pub use substream_ops::SubstreamOps;
pub use substreams::{SubFlow, SubstreamCancelStrategy};
pub use throttle::ThrottleMode;
pub use tick::TickHandle;
pub use time_ops::TimeOps;
pub use watch::{FlowMonitor, MonitorState};
