//! [`Pull`]: a fused source run by the sink that consumes it, on no actor.
//!
//! A source that is one fused stage (an iterator or
//! [`Source::from_poll_fn`](crate::Source::from_poll_fn) source, with the
//! simple operators after it) needs no interpreter to run: whoever wants
//! its elements can ask it for a batch. A sink made with
//! [`Sink::with_pull`](crate::Sink::with_pull) says how it would do that;
//! when such a sink meets such a source, materializing the graph spawns
//! nothing and hands the sink a [`Pull`]. Any other graph runs on islands
//! as usual, through the sink's stage.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Context;

use super::iter::{BoxChunks, Fill};
use crate::error::StreamError;
use crate::stage::Attributes;

/// How one [`Pull::poll_fill`] ended. The elements it appended come first
/// in every case.
#[derive(Debug)]
#[non_exhaustive]
pub enum Pulled {
    /// Call again for more.
    More,
    /// Nothing more is ready now; the waker of the context passed in will
    /// be woken when there is.
    Pending,
    /// The source completed.
    Completed,
    /// The source failed, or a stage in it panicked (the error names it).
    Failed(StreamError),
}

/// A fused source handed to the sink that runs it (see the module docs and
/// [`Sink::with_pull`](crate::Sink::with_pull)). Dropping it cancels the
/// source: what it holds (an iterator, a polled stream) is dropped.
pub struct Pull<T> {
    source: Option<BoxChunks<T>>,
    name: Arc<str>,
    attributes: Attributes,
}

impl<T> Pull<T> {
    pub(crate) fn new(source: BoxChunks<T>, name: Arc<str>, attributes: Attributes) -> Self {
        Self {
            source: Some(source),
            name,
            attributes,
        }
    }

    /// Append at most `max` (at least 1) elements to `out`, producing no
    /// element it does not append. A pending source registers the waker of
    /// `cx`. A panic in the source or its operators is caught and becomes
    /// [`Pulled::Failed`]. Once it has completed or failed, the source is
    /// dropped and every later call says [`Pulled::Completed`].
    pub fn poll_fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Pulled {
        let Some(source) = self.source.as_mut() else {
            return Pulled::Completed;
        };
        let fill = catch_unwind(AssertUnwindSafe(|| source.fill(cx, out, max.max(1))));
        let end = match fill {
            Ok(Fill::More) => return Pulled::More,
            Ok(Fill::Pending) => return Pulled::Pending,
            Ok(Fill::Exhausted) => Pulled::Completed,
            Ok(Fill::Failed(error)) => Pulled::Failed(error),
            Err(payload) => Pulled::Failed(StreamError::panicked(&*payload).in_stage(&self.name)),
        };
        self.source = None;
        end
    }

    /// The fused stages' name, as errors give it (`range.map.as_stream`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The attributes of the sink's stage (its input buffer, say).
    pub fn attributes(&self) -> &Attributes {
        &self.attributes
    }
}

impl<T> std::fmt::Debug for Pull<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pull")
            .field("name", &self.name)
            .field("finished", &self.source.is_none())
            .finish()
    }
}

/// Runs a fused source for a sink, giving the sink's materialized value.
pub(crate) type PullFactory<In> = Arc<dyn Fn(Pull<In>) -> Box<dyn Any + Send> + Send + Sync>;

/// The value a sink's pull made, standing in the sink's first value slot
/// for the value of the whole sink (see [`Sink::with_pull`](crate::Sink::with_pull)).
pub(crate) struct PullResult(pub(crate) Box<dyn Any + Send>);
