//! Substreams: [`SubFlow`], made by `group_by`, `split_when` and
//! `split_after`, and `prefix_and_tail`.
//!
//! Each substream runs as a sub-island driven by the splitting stage
//! (`runner`, a hosted [`SubIsland`](super::sub_island::SubIsland)), in
//! the stage's island: no actor per substream, each asked for one element
//! ahead of demand as Pekko's `FlattenMerge` asks, while upstream is
//! pulled only when a substream asks (or, for `group_by`, a new one may
//! open), as Pekko's `Split` and `GroupBy` pull; one whose
//! flow is simple operators then a `fold`, merged back, runs directly as
//! one consumer per substream (`direct`), unless fusion is off; an
//! iterator source right before the split is pulled by the splitting
//! stage itself (`pump`, the planner's split rule). Operators
//! apply per substream through [`SubFlow`]'s [`FlowOps`] (every linear
//! operator, via one `via_flow`); the substreams are closed by
//! [`SubFlow::merge_substreams`], [`SubFlow::merge_substreams_with_parallelism`],
//! [`SubFlow::concat_substreams`] or [`SubFlow::to`].
//!
//! A substream lives while any stage in it runs, as in Pekko: when its
//! output ends it frees its place (for `parallelism`) but stays, fed by
//! upstream, while a stage keeps going (a `prefix_and_tail` whose tail is
//! read elsewhere, until the tail ends or its subscription timeout
//! passes). Cancelling downstream cancels every substream's output; those
//! still running stay, and upstream with them.

#[cfg(all(test, not(loom)))]
mod close_tests;
mod direct;
mod prefix;
mod pump;
mod runner;
mod splitters;
mod stage;
mod table;

use std::sync::Arc;

pub(crate) use prefix::PrefixAndTail;
use runner::Tail;
use splitters::Splitter;
pub use splitters::SubstreamCancelStrategy;
pub(crate) use splitters::{GroupBy, SplitAfter, SplitWhen};
use stage::Substreams;

use super::FlowOps;
use super::util::logic_flow_with;
use crate::blueprint::{Flow, RunnableGraph, Sink, Source};
use crate::error::ArgumentError;
use crate::plan::graph::Fuses;
use crate::stage::Attributes;

pub(crate) type SplitFactory<T> = Arc<dyn Fn() -> Box<dyn Splitter<T>> + Send + Sync>;

/// A stream split into substreams: operators apply to each substream
/// (it is a [`FlowOps`]), until one of the closing methods joins them.
/// Made by [`SubstreamOps::group_by`](super::SubstreamOps::group_by), [`SubstreamOps::split_when`](super::SubstreamOps::split_when) and
/// [`SubstreamOps::split_after`](super::SubstreamOps::split_after).
///
/// Every substream runs inside the splitting stage, on its island; a
/// substream's flow or sink must not contain an async boundary (the
/// stream fails with [`ErrorKind::AsyncBoundaryInSubstream`](crate::ErrorKind::AsyncBoundaryInSubstream)).
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
///
/// let system = weir_actor::ActorSystem::new("subflow").unwrap();
/// let mat = Materializer::new(&system);
/// let sums = Source::range(1u32..=10)
///     .group_by(2, |x| x % 2)
///     .unwrap()
///     .fold(0, |a, x| a + x)
///     .merge_substreams()
///     .run_with(Sink::collect(), &mat);
/// let mut sums = sums.wait().unwrap();
/// sums.sort_unstable();
/// assert_eq!(sums, vec![25, 30]);
/// system.terminate().wait().unwrap();
/// ```
#[must_use = "a SubFlow does nothing until its substreams are merged or sent to a sink"]
pub struct SubFlow<B, T, U> {
    upstream: B,
    split: SplitFactory<T>,
    flow: Flow<T, U, ()>,
}

impl<B, T: Send + 'static> SubFlow<B, T, T> {
    pub(crate) fn new(upstream: B, split: SplitFactory<T>) -> Self {
        Self {
            upstream,
            split,
            flow: Flow::new(),
        }
    }
}

impl<B, T, U> std::fmt::Debug for SubFlow<B, T, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubFlow").finish_non_exhaustive()
    }
}

impl<B, T, U> FlowOps for SubFlow<B, T, U>
where
    T: Send + 'static,
    U: Send + 'static,
{
    type Out = U;
    type Repr<V: Send + 'static> = SubFlow<B, T, V>;

    /// `flow` runs in every substream (its materialized value is dropped).
    fn via_flow<V: Send + 'static, M: 'static>(self, flow: Flow<U, V, M>) -> SubFlow<B, T, V> {
        SubFlow {
            upstream: self.upstream,
            split: self.split,
            flow: self.flow.via_mat(flow, |(), _| ()),
        }
    }
}

impl<B, T, U> SubFlow<B, T, U>
where
    B: FlowOps<Out = T>,
    T: Send + 'static,
    U: Send + 'static,
{
    fn close(self, tail: Tail<U>, parallelism: usize, name: &'static str) -> B::Repr<U> {
        let (split, flow) = (self.split, self.flow);
        let direct = direct::plan(&flow, &tail);
        let make: pump::MakeSplit<T, U> = Arc::new(move |attributes: &Attributes| {
            Substreams::new(
                split(),
                flow.clone(),
                tail.clone(),
                direct.clone(),
                parallelism,
            )
            .supervised_by(attributes.supervision_strategy().cloned())
        });
        let fused = Arc::new(pump::SplitFuse {
            make: Arc::clone(&make),
        });
        let mut stage = logic_flow_with(name, move |attributes| make(attributes));
        stage.graph.nodes[0].fuses = Some(Fuses::Split(fused));
        self.upstream.via_flow(stage)
    }

    /// The substreams' elements, merged as they come; every substream
    /// runs at once.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("merge-substreams").unwrap();
    /// let mat = Materializer::new(&system);
    /// let out = Source::range(0u32..6)
    ///     .group_by(3, |x| x % 3)
    ///     .unwrap()
    ///     .map(|x| x * 10)
    ///     .merge_substreams()
    ///     .run_with(Sink::collect(), &mat);
    /// let mut out = out.wait().unwrap();
    /// out.sort_unstable();
    /// assert_eq!(out, vec![0, 10, 20, 30, 40, 50]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn merge_substreams(self) -> B::Repr<U> {
        self.close(Tail::Out, usize::MAX, "merge_substreams")
    }

    /// Like [`merge_substreams`](Self::merge_substreams), with at most
    /// `parallelism` substreams running at once: an element for another
    /// new substream waits (holding upstream back) until one completes.
    /// With `group_by`, whose substreams complete only when upstream does
    /// (or they cancel), fewer than the keys may stall the stream, as in
    /// Akka.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("merge-parallelism").unwrap();
    /// let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=6)
    ///     .split_after(|x| x % 2 == 0)
    ///     .fold(0, |a, x| a + x)
    ///     .merge_substreams_with_parallelism(2)
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![3, 7, 11]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn merge_substreams_with_parallelism(
        self,
        parallelism: usize,
    ) -> Result<B::Repr<U>, ArgumentError> {
        super::util::at_least_one(parallelism, "parallelism")?;
        Ok(self.close(Tail::Out, parallelism, "merge_substreams"))
    }

    /// The substreams' elements one substream after another, in the order
    /// they opened (`merge_substreams_with_parallelism(1)`).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("concat-substreams").unwrap();
    /// let mat = Materializer::new(&system);
    /// let out = Source::from_iter(vec![1, 2, 0, 3, 0, 4])
    ///     .split_when(|x| *x == 0)
    ///     .grouped(10)
    ///     .unwrap()
    ///     .concat_substreams()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec![vec![1, 2], vec![0, 3], vec![0, 4]]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn concat_substreams(self) -> B::Repr<U> {
        self.close(Tail::Out, 1, "concat_substreams")
    }
}

impl<T, U, Mat> SubFlow<Source<T, Mat>, T, U>
where
    T: Send + 'static,
    U: Send + 'static,
    Mat: 'static,
{
    /// Each substream into a fresh `sink` of its own (its materialized
    /// value is dropped); the graph materializes the source's value.
    ///
    /// ```
    /// use std::time::Duration;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("subflow-to").unwrap();
    /// let mat = Materializer::new(&system);
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let sink = Sink::fold((), move |(), x: u32| tx.send(x).unwrap());
    /// Source::range(0u32..4).group_by(2, |x| x % 2).unwrap().to(sink).run(&mat);
    /// let mut seen: Vec<u32> = (0..4).map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap()).collect();
    /// seen.sort_unstable();
    /// assert_eq!(seen, vec![0, 1, 2, 3]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn to<M: 'static>(self, sink: Sink<U, M>) -> RunnableGraph<Mat> {
        let sink = sink.map_materialized_value(|_| ());
        self.close(Tail::To(sink), usize::MAX, "substreams_to")
            .to(Sink::ignore())
    }
}

impl<I, T, U, Mat> SubFlow<Flow<I, T, Mat>, T, U>
where
    I: Send + 'static,
    T: Send + 'static,
    U: Send + 'static,
    Mat: 'static,
{
    /// Each substream into a fresh `sink` of its own: the flow becomes a
    /// sink materializing the flow's value.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let sink: Sink<u32, ()> = Flow::<u32>::new()
    ///     .split_after(|x| *x > 2)
    ///     .to(Sink::ignore());
    /// # let _ = sink;
    /// ```
    pub fn to<M: 'static>(self, sink: Sink<U, M>) -> Sink<I, Mat> {
        let sink = sink.map_materialized_value(|_| ());
        self.close(Tail::To(sink), usize::MAX, "substreams_to")
            .to(Sink::ignore())
    }
}
