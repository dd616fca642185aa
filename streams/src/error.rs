//! The one error type a stream fails with.

use std::fmt;
use std::sync::Arc;

/// Why a stream failed. Cheap to clone: a failure travels to every stage
/// downstream of where it started and to every sink's completion.
///
/// [`StreamError::stage`] names the stage the failure started in when it
/// came from stage code (a panic, an error a handler returned, a broken
/// push/pull protocol); the interpreter fills it in.
///
/// # Examples
///
/// ```
/// use weir_streams::{ErrorKind, StreamError};
///
/// let error = StreamError::msg("no more beans");
/// assert_eq!(error.to_string(), "no more beans");
/// assert!(matches!(error.kind(), ErrorKind::Message(_)));
/// ```
#[derive(Clone)]
pub struct StreamError {
    // One pointer, so `Result<(), StreamError>` (every handler's return
    // value) fits in a register.
    inner: Arc<Inner>,
}

struct Inner {
    kind: Arc<ErrorKind>,
    stage: Option<Arc<str>>,
}

/// What went wrong; see [`StreamError::kind`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A failure the user raised with a message.
    Message(String),
    /// A failure the user raised with an error value.
    Custom(Box<dyn std::error::Error + Send + Sync>),
    /// Stage code panicked; the panic's message.
    Panicked(String),
    /// A stage broke the push/pull protocol (for example pushed without a pull).
    Protocol(String),
    /// A bounded buffer was full under `OverflowStrategy::Fail`.
    BufferOverflow {
        /// The buffer's capacity.
        capacity: usize,
    },
    /// The stream ended without the element the sink needed (`Sink::head`, `Sink::reduce`, ...).
    EmptyStream,
    /// `Source::cycle`'s factory gave an empty iterator: there is nothing
    /// to repeat (Pekko's `cycle` fails with "empty iterator" likewise).
    EmptyCycle,
    /// The actor running the stream stopped before the stream finished
    /// (the system shut down, or the island was stopped).
    AbruptTermination,
    /// A kill switch aborted the stream, or a materialized handle was
    /// used after the stage it talks to had stopped.
    Detached,
    /// A time limit passed: which one, and the duration it was set to.
    Timeout(TimeoutKind, std::time::Duration),
    /// `throttle` in `ThrottleMode::Enforcing` got elements faster than
    /// `cost` per `per` (with its burst spent).
    RateExceeded {
        /// The cost allowed per `per`.
        cost: u32,
        /// The period.
        per: std::time::Duration,
    },
    /// `limit` / `limit_weighted`: more than `max` passed.
    LimitExceeded {
        /// The limit.
        max: u64,
    },
    /// `PartitionHub`'s partitioner chose a consumer that is not there.
    PartitionOutOfRange {
        /// The index the partitioner returned.
        index: usize,
        /// How many consumers there were.
        consumers: usize,
    },
    /// `group_by`: an element needed a new substream while `max`
    /// substreams were open (Akka's `TooManySubstreamsOpenException`).
    TooManySubstreams {
        /// The `max_substreams` the operator was given.
        max: usize,
    },
    /// A substream's flow or sink (after `group_by`, `split_when` or
    /// `split_after`) contains an async boundary: substreams run inside the
    /// splitting stage, on its island.
    AsyncBoundaryInSubstream,
    /// A substream source (a `prefix_and_tail` tail) was not run within
    /// its subscription timeout, the duration given (Akka's
    /// `SubscriptionTimeoutException`); see
    /// [`SubscriptionTimeoutMode`](crate::SubscriptionTimeoutMode).
    SubscriptionTimeout(std::time::Duration),
}

/// Which time limit an [`ErrorKind::Timeout`] is about (Akka's
/// `InitialTimeoutException`, `CompletionTimeoutException`,
/// `StreamIdleTimeoutException`, `BackpressureTimeoutException`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeoutKind {
    /// `initial_timeout`: the first element did not pass in time.
    Initial,
    /// `completion_timeout`: the stream did not complete in time.
    Completion,
    /// `idle_timeout`: no element passed for that long.
    Idle,
    /// `backpressure_timeout`: downstream did not ask for the next element
    /// for that long after the last one (or after the start, for the first).
    Backpressure,
}

impl StreamError {
    /// A failure with a message.
    pub fn msg(message: impl Into<String>) -> Self {
        Self::from_kind(ErrorKind::Message(message.into()))
    }

    /// A failure carrying an error value.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::StreamError;
    ///
    /// let parse = "x".parse::<u8>().unwrap_err();
    /// let error = StreamError::custom(parse);
    /// assert!(error.to_string().contains("invalid digit"));
    /// ```
    pub fn custom(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::from_kind(ErrorKind::Custom(Box::new(error)))
    }

    /// A failure of the given kind.
    pub fn from_kind(kind: ErrorKind) -> Self {
        Self {
            inner: Arc::new(Inner {
                kind: Arc::new(kind),
                stage: None,
            }),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// The stage the failure started in, when it came from stage code.
    pub fn stage(&self) -> Option<&str> {
        self.inner.stage.as_deref()
    }

    /// Attribute the failure to `stage` unless it already names one.
    pub(crate) fn in_stage(self, stage: &Arc<str>) -> Self {
        if self.inner.stage.is_some() {
            return self;
        }
        Self {
            inner: Arc::new(Inner {
                kind: Arc::clone(&self.inner.kind),
                stage: Some(Arc::clone(stage)),
            }),
        }
    }

    pub(crate) fn protocol(detail: impl Into<String>) -> Self {
        Self::from_kind(ErrorKind::Protocol(detail.into()))
    }

    pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "non-string panic payload".to_owned()
        };
        Self::from_kind(ErrorKind::Panicked(message))
    }

    /// Whether two errors are the same failure (the same origin, shared by clones).
    pub fn same_failure(&self, other: &StreamError) -> bool {
        Arc::ptr_eq(&self.inner.kind, &other.inner.kind)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Message(m) => f.write_str(m),
            ErrorKind::Custom(e) => fmt::Display::fmt(e, f),
            ErrorKind::Panicked(m) => write!(f, "panicked: {m}"),
            ErrorKind::Protocol(m) => write!(f, "protocol violation: {m}"),
            ErrorKind::BufferOverflow { capacity } => {
                write!(f, "buffer overflow (max capacity was: {capacity})")
            }
            ErrorKind::EmptyStream => f.write_str("the stream completed without an element"),
            ErrorKind::EmptyCycle => f.write_str("Source::cycle was given an empty iterator"),
            ErrorKind::AbruptTermination => {
                f.write_str("the actor running the stream stopped before the stream finished")
            }
            ErrorKind::Detached => f.write_str("the stage was detached from the stream"),
            ErrorKind::Timeout(kind, after) => {
                let what = match kind {
                    TimeoutKind::Initial => "the first element did not pass",
                    TimeoutKind::Completion => "the stream did not complete",
                    TimeoutKind::Idle => "no element passed",
                    TimeoutKind::Backpressure => "downstream did not ask for the next element",
                };
                write!(f, "{what} within {after:?}")
            }
            ErrorKind::RateExceeded { cost, per } => {
                write!(
                    f,
                    "maximum throttle throughput exceeded ({cost} per {per:?})"
                )
            }
            ErrorKind::LimitExceeded { max } => write!(f, "limit of {max} reached"),
            ErrorKind::PartitionOutOfRange { index, consumers } => {
                write!(f, "the partitioner chose consumer {index} of {consumers}")
            }
            ErrorKind::TooManySubstreams { max } => {
                write!(
                    f,
                    "cannot open a new substream: {max} are open (max_substreams)"
                )
            }
            ErrorKind::AsyncBoundaryInSubstream => {
                f.write_str("a substream flow or sink with an async boundary is not supported")
            }
            ErrorKind::SubscriptionTimeout(after) => {
                write!(f, "the substream source was not run within {after:?}")
            }
        }
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner.stage {
            Some(stage) => write!(f, "stage `{stage}` failed: {}", self.inner.kind),
            None => fmt::Display::fmt(&self.inner.kind, f),
        }
    }
}

impl fmt::Debug for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamError")
            .field("kind", &self.inner.kind)
            .field("stage", &self.inner.stage)
            .finish()
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.inner.kind {
            ErrorKind::Custom(e) => Some(&**e),
            _ => None,
        }
    }
}

/// Why a graph could not start (see
/// [`RunnableGraph::try_run`](crate::RunnableGraph::try_run)). `run`
/// does not return it: the stream's sinks report
/// [`ErrorKind::AbruptTermination`] instead.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::MaterializeError;
///
/// let system = weir_actor::ActorSystem::new("too-late").unwrap();
/// let materializer = Materializer::new(&system);
/// system.terminate().wait().unwrap();
/// let graph = Source::single(1u8).async_boundary().to_mat(Sink::ignore(), Keep::right);
/// assert!(matches!(graph.try_run(&materializer), Err(MaterializeError::SystemTerminated)));
/// ```
#[cfg(not(loom))] // weir-actor has no spawning under loom
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaterializeError {
    /// The actor system is terminating or has terminated: it starts no
    /// new streams.
    SystemTerminated,
    /// An island's task could not be spawned for another reason (a
    /// dispatcher the system builder did not declare, a pinned thread that
    /// could not start).
    Spawn(weir_actor::SpawnError),
}

#[cfg(not(loom))]
impl From<weir_actor::SpawnError> for MaterializeError {
    fn from(error: weir_actor::SpawnError) -> Self {
        match error {
            weir_actor::SpawnError::ParentStopped => MaterializeError::SystemTerminated,
            other => MaterializeError::Spawn(other),
        }
    }
}

#[cfg(not(loom))]
impl fmt::Display for MaterializeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaterializeError::SystemTerminated => {
                f.write_str("the actor system has terminated; it runs no new streams")
            }
            MaterializeError::Spawn(e) => write!(f, "could not start the stream's island: {e}"),
        }
    }
}

#[cfg(not(loom))]
impl std::error::Error for MaterializeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MaterializeError::Spawn(e) => Some(e),
            MaterializeError::SystemTerminated => None,
        }
    }
}

/// Why a [snapshot](crate::Materializer::snapshot) of the running streams
/// is incomplete.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("snapshot-error").unwrap();
/// let materializer = Materializer::new(&system);
/// // Nothing runs: every island (none) answers at once.
/// let streams = materializer.snapshot().wait_timeout(Duration::ZERO).unwrap();
/// assert!(streams.is_empty());
/// system.terminate().wait().unwrap();
/// ```
#[cfg(not(loom))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// Some islands did not answer in time: they are busy, or blocked
    /// inside a stage's handler (a blocking call holds the island's
    /// thread), which is itself where such a stream waits.
    TimedOut {
        /// What the other islands answered.
        answered: Vec<crate::snapshot::StreamSnapshot>,
        /// The names of the islands that did not answer
        /// (`stream-<n>-<island>-<stage>`).
        silent: Vec<String>,
    },
}

#[cfg(not(loom))]
impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::TimedOut { silent, .. } => write!(
                f,
                "{} island(s) did not answer the snapshot in time (busy or blocked in a stage): {}",
                silent.len(),
                silent.join(", ")
            ),
        }
    }
}

#[cfg(not(loom))]
impl std::error::Error for SnapshotError {}

/// A typed error for a bad argument to an operator or a source
/// (a zero where a size is needed, a strategy that cannot apply).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgumentError {
    /// The argument must be at least 1.
    Zero {
        /// The argument's name.
        argument: &'static str,
    },
    /// `OverflowStrategy::Backpressure` cannot apply where the producer cannot be slowed down.
    BackpressureUnsupported {
        /// What to use instead.
        hint: &'static str,
    },
    /// An argument is out of its range.
    Invalid {
        /// The argument's name.
        argument: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgumentError::Zero { argument } => write!(f, "`{argument}` must be at least 1"),
            ArgumentError::BackpressureUnsupported { hint } => {
                write!(
                    f,
                    "OverflowStrategy::Backpressure is not supported here; {hint}"
                )
            }
            ArgumentError::Invalid { argument, reason } => write!(f, "`{argument}`: {reason}"),
        }
    }
}

impl std::error::Error for ArgumentError {}

/// Two errors are equal when they say the same: the same stage and the
/// same description (clones of one failure always are).
impl PartialEq for StreamError {
    fn eq(&self, other: &Self) -> bool {
        self.same_failure(other)
            || (self.stage() == other.stage()
                && self.kind().to_string() == other.kind().to_string())
    }
}

/// A graph the [`GraphBuilder`](crate::graph::GraphBuilder) cannot build:
/// a port left open, a port connected twice, or a port of another builder.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GraphError {
    /// A port is not connected and is not one of the graph's open ports.
    Unconnected {
        /// The name of the stage the port belongs to.
        stage: String,
        /// `"inlet"` or `"outlet"`.
        side: &'static str,
        /// The port's number in the stage's shape.
        port: u16,
    },
    /// A port was connected before (or asked to stay open twice).
    AlreadyConnected {
        /// The name of the stage the port belongs to.
        stage: String,
        /// `"inlet"` or `"outlet"`.
        side: &'static str,
        /// The port's number in the stage's shape.
        port: u16,
    },
    /// A port or materialized value of another builder.
    ForeignPort,
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::Unconnected { stage, side, port } => {
                write!(f, "{side} {port} of stage `{stage}` is not connected")
            }
            GraphError::AlreadyConnected { stage, side, port } => {
                write!(f, "{side} {port} of stage `{stage}` is already connected")
            }
            GraphError::ForeignPort => f.write_str("a port of another graph builder"),
        }
    }
}

impl std::error::Error for GraphError {}

/// Why downstream cancelled a port (Pekko's cancellation cause).
///
/// A stage reads it in
/// [`on_downstream_finish`](crate::stage::GraphStageLogic::on_downstream_finish)
/// with [`StageContext::cancellation`](crate::stage::StageContext::cancellation).
/// An ordinary cancel (a `take` that has enough, a sink that is done) is
/// [`NoMoreElementsNeeded`](Self::NoMoreElementsNeeded); a stage that
/// fails cancels its inlets with [`Failed`](Self::Failed) carrying the
/// failure, and the default handler passes the cause on upstream, so a
/// source learns that the stream it fed failed. Made only when a port is
/// cancelled: nothing per element.
///
/// # Examples
///
/// ```
/// use weir_streams::{Cancellation, StreamError};
///
/// let cause = Cancellation::Failed(StreamError::msg("sink broke"));
/// assert_eq!(cause.failure().map(ToString::to_string).as_deref(), Some("sink broke"));
/// assert!(Cancellation::NoMoreElementsNeeded.failure().is_none());
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Cancellation {
    /// Downstream has what it wanted: a normal end.
    #[default]
    NoMoreElementsNeeded,
    /// Downstream failed with this error.
    Failed(StreamError),
}

impl Cancellation {
    /// The failure downstream cancelled with, if it failed.
    pub fn failure(&self) -> Option<&StreamError> {
        match self {
            Cancellation::NoMoreElementsNeeded => None,
            Cancellation::Failed(error) => Some(error),
        }
    }

    /// `Ok(())` for a normal cancel, else the failure: what a stage whose
    /// result is ended by the cancel reports.
    pub fn into_result(self) -> Result<(), StreamError> {
        match self {
            Cancellation::NoMoreElementsNeeded => Ok(()),
            Cancellation::Failed(error) => Err(error),
        }
    }

    pub(crate) fn from_failure(failure: Option<StreamError>) -> Self {
        failure.map_or(Cancellation::NoMoreElementsNeeded, Cancellation::Failed)
    }
}
