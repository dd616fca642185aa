//! How `group_by`, `split_when` and `split_after` route elements: the
//! [`Splitter`] contract the splitting stage (`stage`) calls, and its
//! three implementations.

use std::collections::{HashMap, HashSet};

/// Keys are hashed once per element: foldhash, seeded per map.
type Hasher = foldhash::fast::RandomState;
use std::hash::Hash;

use crate::error::{ErrorKind, StreamError};

/// Where an element goes.
pub(crate) enum Route {
    /// Into the open substream `id`.
    To(u64),
    /// Into a new substream.
    New,
    /// Nowhere (its substream was cancelled).
    Drop,
}

/// How one splitting operator routes elements.
pub(crate) trait Splitter<T>: Send {
    /// Where `element` goes; `Err` fails the stream.
    fn route(&mut self, element: &T) -> Result<Route, StreamError>;
    /// The element routed `New` went into substream `id`.
    fn opened(&mut self, id: u64);
    /// Substream `id` no longer takes elements (it cancelled its input);
    /// `true` cancels upstream too (the stream ends once the running
    /// substreams have).
    fn cancelled(&mut self, id: u64) -> bool;
    /// Whether the substream an element went to ends after it (`split_after`).
    fn close_after(&mut self, element: &T) -> bool {
        let _ = element;
        false
    }
    /// Whether [`close_after`](Self::close_after) may ever say `true`.
    fn may_close_after(&self) -> bool {
        false
    }
    /// Substream `id` that must end before an element routed `New` starts
    /// the next one (`split_when`).
    fn close_before(&mut self) -> Option<u64> {
        None
    }
    /// For a splitter whose elements go to one substream at a time
    /// (`split_*`): that substream, if one is open (`Some(None)` when the
    /// next element opens one or is dropped). `None` for `group_by`.
    fn current(&self) -> Option<Option<u64>> {
        None
    }
}

/// What `split_when` / `split_after` do when a substream cancels (Akka's
/// `SubstreamCancelStrategy`).
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::SubstreamCancelStrategy;
///
/// let system = weir_actor::ActorSystem::new("cancel-strategy").unwrap();
/// let mat = Materializer::new(&system);
/// let firsts = |strategy| {
///     Source::range(0u32..9)
///         .split_when_with(strategy, |x| x % 3 == 0)
///         .take(1)
///         .concat_substreams()
///         .run_with(Sink::collect(), &mat)
///         .wait()
/// };
/// // Drain: each substream gives its first element, the rest are dropped.
/// assert_eq!(firsts(SubstreamCancelStrategy::Drain), Ok(vec![0, 3, 6]));
/// // Propagate: the first cancellation cancels the whole stream.
/// assert_eq!(firsts(SubstreamCancelStrategy::Propagate), Ok(vec![0]));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubstreamCancelStrategy {
    /// Cancel upstream too: the stream ends once the running substreams
    /// have.
    Propagate,
    /// Drop the cancelled substream's elements until the next split (the
    /// default, as in Akka).
    #[default]
    Drain,
}

pub(crate) struct GroupBy<K, F> {
    pub(crate) key: F,
    pub(crate) max: usize,
    pub(crate) recreate: bool,
    open: HashMap<K, u64, Hasher>,
    keys: HashMap<u64, K, Hasher>,
    closed: HashSet<K, Hasher>,
    new_key: Option<K>,
}

impl<K, F> GroupBy<K, F> {
    pub(crate) fn new(key: F, max: usize, recreate: bool) -> Self {
        Self {
            key,
            max,
            recreate,
            open: HashMap::default(),
            keys: HashMap::default(),
            closed: HashSet::default(),
            new_key: None,
        }
    }
}

impl<T, K, F> Splitter<T> for GroupBy<K, F>
where
    K: Hash + Eq + Clone + Send + 'static,
    F: FnMut(&T) -> K + Send + 'static,
{
    fn route(&mut self, element: &T) -> Result<Route, StreamError> {
        let key = (self.key)(element);
        if let Some(id) = self.open.get(&key) {
            return Ok(Route::To(*id));
        }
        if self.closed.contains(&key) {
            return Ok(Route::Drop);
        }
        // Closed keys are remembered (their elements are dropped), so they
        // count too (Pekko): the stage remembers at most `max` keys.
        if self.open.len() + self.closed.len() >= self.max {
            return Err(StreamError::from_kind(ErrorKind::TooManySubstreams {
                max: self.max,
            }));
        }
        self.new_key = Some(key);
        Ok(Route::New)
    }

    fn opened(&mut self, id: u64) {
        if let Some(key) = self.new_key.take() {
            self.open.insert(key.clone(), id);
            self.keys.insert(id, key);
        }
    }

    fn cancelled(&mut self, id: u64) -> bool {
        if let Some(key) = self.keys.remove(&id) {
            self.open.remove(&key);
            if !self.recreate {
                self.closed.insert(key);
            }
        }
        false
    }
}

pub(crate) struct SplitWhen<F> {
    pub(crate) pred: F,
    pub(crate) strategy: SubstreamCancelStrategy,
    started: bool,
    current: Option<u64>,
    closing: Option<u64>,
}

impl<F> SplitWhen<F> {
    pub(crate) fn new(pred: F, strategy: SubstreamCancelStrategy) -> Self {
        Self {
            pred,
            strategy,
            started: false,
            current: None,
            closing: None,
        }
    }
}

impl<T, F> Splitter<T> for SplitWhen<F>
where
    F: FnMut(&T) -> bool + Send + 'static,
{
    fn route(&mut self, element: &T) -> Result<Route, StreamError> {
        // The first element always opens the first substream.
        let split = (self.pred)(element) || !self.started;
        self.started = true;
        if split {
            self.closing = self.current.take();
            return Ok(Route::New);
        }
        Ok(self.current.map_or(Route::Drop, Route::To))
    }

    fn opened(&mut self, id: u64) {
        self.current = Some(id);
    }

    fn cancelled(&mut self, id: u64) -> bool {
        if self.current == Some(id) {
            self.current = None;
        }
        self.strategy == SubstreamCancelStrategy::Propagate
    }

    fn close_before(&mut self) -> Option<u64> {
        self.closing.take()
    }

    fn current(&self) -> Option<Option<u64>> {
        Some(self.current)
    }
}

pub(crate) struct SplitAfter<F> {
    pub(crate) pred: F,
    pub(crate) strategy: SubstreamCancelStrategy,
    current: Option<u64>,
    draining: bool,
}

impl<F> SplitAfter<F> {
    pub(crate) fn new(pred: F, strategy: SubstreamCancelStrategy) -> Self {
        Self {
            pred,
            strategy,
            current: None,
            draining: false,
        }
    }
}

impl<T, F> Splitter<T> for SplitAfter<F>
where
    F: FnMut(&T) -> bool + Send + 'static,
{
    fn route(&mut self, element: &T) -> Result<Route, StreamError> {
        if self.draining {
            // Dropped up to and including the element that ends the
            // cancelled substream.
            self.draining = !(self.pred)(element);
            return Ok(Route::Drop);
        }
        Ok(self.current.map_or(Route::New, Route::To))
    }

    fn opened(&mut self, id: u64) {
        self.current = Some(id);
    }

    fn cancelled(&mut self, id: u64) -> bool {
        if self.current == Some(id) {
            self.current = None;
            self.draining = true;
        }
        self.strategy == SubstreamCancelStrategy::Propagate
    }

    fn may_close_after(&self) -> bool {
        true
    }

    fn current(&self) -> Option<Option<u64>> {
        Some(self.current)
    }

    fn close_after(&mut self, element: &T) -> bool {
        let close = (self.pred)(element);
        if close {
            self.current = None;
        }
        close
    }
}
