//! [`JunctionOps`]: the fluent forms of the junctions, on every `Source`
//! and `Flow`.

use super::builder::GraphBuilder;
use super::junctions::{
    Broadcast, Concat, Interleave, Merge, MergePreferred, MergePrioritized, MergeSorted, OrElse,
    Partition, WireTap, Zip, ZipLatest, ZipLatestWith, ZipN, ZipWith, ZipWithN,
};
use crate::blueprint::{Flow, Sink, Source};
use crate::error::ArgumentError;
use crate::ops::{FlowOps, SubstreamOps};
use crate::plan::graph::Graph;

const WIRED: &str = "a junction flow has every other port connected";

/// A flow from input `mine` of a two-input junction to its output, with
/// `other` feeding its other input.
/// The flow's materialized value is `other`'s.
pub(super) fn with_other<T, U, O, S, M>(
    stage: S,
    other: Source<U, M>,
    mine_first: bool,
) -> Flow<T, O, M>
where
    T: Send + 'static,
    U: Send + 'static,
    O: Send + 'static,
    M: 'static,
    S: crate::stage::GraphStage<Shape = crate::stage::FanInShape2<T, U, O>>,
{
    debug_assert!(mine_first, "two-type junctions take this stream first");
    let mut b = GraphBuilder::new();
    let junction = b.add(stage);
    let (other, key) = b.source_mat(other);
    b.connect(other, junction.in1()).expect(WIRED);
    b.build_flow(junction.in0(), junction.out(), move |m| m.take(&key))
        .expect(WIRED)
}

/// A flow into input `mine` of a two-input uniform junction, with `other`
/// feeding the other input; the flow's materialized value is `other`'s.
pub(super) fn uniform_with_other<T, S, M>(
    stage: S,
    other: Source<T, M>,
    mine: usize,
) -> Flow<T, T, M>
where
    T: Send + 'static,
    M: 'static,
    S: crate::stage::GraphStage<Shape = crate::stage::UniformFanInShape<T, 2>>,
{
    let mut b = GraphBuilder::new();
    let junction = b.add(stage);
    let (other, key) = b.source_mat(other);
    let ins = junction.ins();
    b.connect(other, ins[1 - mine]).expect(WIRED);
    b.build_flow(ins[mine], junction.out(), move |m| m.take(&key))
        .expect(WIRED)
}

/// Fan-in and fan-out in the fluent style: every [`Source`] and [`Flow`]
/// has these (the other blueprint's materialized value is dropped; use a
/// [`GraphBuilder`] to keep it).
pub trait JunctionOps: FlowOps {
    /// This stream's elements and `other`'s, as they arrive
    /// ([`Merge`]); completes when both have.
    fn merge<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out> {
        self.via_flow(uniform_with_other(Merge::<Self::Out, 2>::new(), other, 0))
    }

    /// This stream's elements and `other`'s, as [`merge`](Self::merge),
    /// but the stream completes as soon as either completes (Pekko's
    /// `merge(that, eagerComplete = true)`; [`Merge::eager_complete`]):
    /// what the other would still send is not waited for.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::graph::JunctionOps;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("merge-eager").unwrap();
    /// let mat = Materializer::new(&system);
    /// // The endless side does not keep the stream open.
    /// let got = Source::single(1u32)
    ///     .merge_eager(Source::repeat(9u32))
    ///     .run_with(Sink::collect(), &mat)
    ///     .wait()
    ///     .unwrap();
    /// assert!(got.contains(&1));
    /// system.terminate().wait().unwrap();
    /// ```
    fn merge_eager<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out> {
        let stage = Merge::<Self::Out, 2>::new().eager_complete();
        self.via_flow(uniform_with_other(stage, other, 0))
    }

    /// This stream's elements and `other`'s, as [`merge`](Self::merge),
    /// but whenever both have an element waiting, this stream's goes first
    /// when `prefer_this` (else `other`'s) ([`MergePreferred`]).
    ///
    /// Porting from Akka/Pekko: their `mergePreferred(that, priority)`
    /// prefers *`that`* when `priority` is true; Weir's flag names the
    /// side it prefers, so Akka's `mergePreferred(that, true)` is
    /// `merge_preferred(that, false)` here.
    fn merge_preferred<M: 'static>(
        self,
        other: Source<Self::Out, M>,
        prefer_this: bool,
    ) -> Self::Repr<Self::Out> {
        let mine = if prefer_this { 0 } else { 1 };
        self.via_flow(uniform_with_other(
            MergePreferred::<Self::Out, 2>::new(),
            other,
            mine,
        ))
    }

    /// This stream's elements and `other`'s, as [`merge`](Self::merge),
    /// but when both have an element waiting they are served in the
    /// proportion `this_priority : other_priority` ([`MergePrioritized`]).
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] when a priority is 0.
    fn merge_prioritized<M: 'static>(
        self,
        other: Source<Self::Out, M>,
        this_priority: u32,
        other_priority: u32,
    ) -> Result<Self::Repr<Self::Out>, ArgumentError> {
        let stage = MergePrioritized::<Self::Out, 2>::new([this_priority, other_priority])?;
        Ok(self.via_flow(uniform_with_other(stage, other, 0)))
    }

    /// This sorted stream and the sorted `other` merged into one sorted
    /// stream ([`MergeSorted`]).
    fn merge_sorted<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out>
    where
        Self::Out: Ord,
    {
        self.via_flow(uniform_with_other(
            MergeSorted::<Self::Out>::new(),
            other,
            0,
        ))
    }

    /// Pairs of this stream's elements and `other`'s ([`Zip`](super::Zip));
    /// completes when either does.
    fn zip<U: Send + 'static, M: 'static>(self, other: Source<U, M>) -> Self::Repr<(Self::Out, U)> {
        self.via_flow(with_other(Zip::new(), other, true))
    }

    /// This stream's elements combined with `other`'s by `f` ([`ZipWith`]).
    fn zip_with<U, O, F, M>(self, other: Source<U, M>, f: F) -> Self::Repr<O>
    where
        U: Send + 'static,
        O: Send + 'static,
        F: FnMut(Self::Out, U) -> O + Clone + Send + Sync + 'static,
        M: 'static,
    {
        self.via_flow(with_other(ZipWith::new_mut(f), other, true))
    }

    /// Pairs of the latest elements of this stream and `other`, each time
    /// either has a new one ([`ZipLatest`]); completes when either does.
    fn zip_latest<U: Clone + Send + 'static, M: 'static>(
        self,
        other: Source<U, M>,
    ) -> Self::Repr<(Self::Out, U)>
    where
        Self::Out: Clone,
    {
        self.via_flow(with_other(ZipLatest::new(), other, true))
    }

    /// The latest elements of this stream and `other` combined by `f`,
    /// each time either has a new one ([`ZipLatestWith`]).
    fn zip_latest_with<U, O, F, M>(self, other: Source<U, M>, f: F) -> Self::Repr<O>
    where
        Self::Out: Clone,
        U: Clone + Send + 'static,
        O: Send + 'static,
        F: FnMut(Self::Out, U) -> O + Clone + Send + Sync + 'static,
        M: 'static,
    {
        self.via_flow(with_other(ZipLatestWith::new(f), other, true))
    }

    /// This stream's elements, then `other`'s ([`Concat`]), as Akka's
    /// `concat`: `other` runs from the start, alongside this stream, but
    /// is asked for elements only after this stream completes. So a
    /// failure of `other` before then fails the concatenation at once
    /// (this stream's remaining elements are not emitted), as any failed
    /// input of Akka's `Concat` does. To start `other` only once this
    /// stream has completed, use [`concat_lazy`](Self::concat_lazy).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("concat-eager").unwrap();
    /// let mat = Materializer::new(&system);
    /// let all = Source::range(1u32..=2).concat(Source::range(7u32..=8));
    /// assert_eq!(all.run_with(Sink::collect(), &mat).wait(), Ok(vec![1, 2, 7, 8]));
    /// // `other` runs from the start: its failure is the stream's at once.
    /// let broken = Source::from_iter(0u32..).concat(Source::failed(weir_streams::StreamError::msg("no")));
    /// assert!(broken.run_with(Sink::collect(), &mat).wait().is_err());
    /// system.terminate().wait().unwrap();
    /// ```
    fn concat<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out> {
        self.via_flow(uniform_with_other(Concat::<Self::Out, 2>::new(), other, 0))
    }

    /// This stream's elements, then `other`'s, with `other` materialized
    /// (started) only once this stream has completed and downstream asks
    /// for more (as Akka's `Source.lazySource`): nothing of `other`
    /// (its start, a `map_materialized_value` in it, its elements, its
    /// failure) happens before, and nothing at all if this stream fails
    /// or is cancelled first. In Akka terms this is
    /// `concatLazy(Source.lazySource(() => other))`: Akka's own
    /// `concatLazy` materializes `other` with this stream and only delays
    /// asking it for elements. Each run materializes `other` afresh.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("concat-lazy").unwrap();
    /// let mat = Materializer::new(&system);
    /// // `other` fails only once it runs, after this stream's elements.
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let done = Source::range(1u32..=3)
    ///     .concat_lazy(Source::failed(weir_streams::StreamError::msg("later")))
    ///     .run_with(Sink::fold((), move |(), x| tx.send(x).unwrap()), &mat);
    /// assert!(done.wait().is_err());
    /// assert_eq!(rx.try_iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    /// system.terminate().wait().unwrap();
    /// ```
    fn concat_lazy<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out> {
        // Concat asks its second input only after the first completes; the
        // single element that asking makes starts `other`.
        let later = Source::single(()).flat_map_concat(move |()| other.clone());
        self.concat(later)
    }

    /// `other`'s elements, then this stream's ([`Concat`]); both run from
    /// the start, as for [`concat`](Self::concat).
    fn prepend<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out> {
        self.via_flow(uniform_with_other(Concat::<Self::Out, 2>::new(), other, 1))
    }

    /// `segment_size` elements of this stream, then of `other`, in turn
    /// ([`Interleave`]); once one completes, the rest of the other.
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] when `segment_size` is 0.
    fn interleave<M: 'static>(
        self,
        other: Source<Self::Out, M>,
        segment_size: usize,
    ) -> Result<Self::Repr<Self::Out>, ArgumentError> {
        let stage = Interleave::<Self::Out, 2>::new(segment_size)?;
        Ok(self.via_flow(uniform_with_other(stage, other, 0)))
    }

    /// As [`interleave`](Self::interleave), but the stream completes as
    /// soon as either input completes (Pekko's `interleave(that,
    /// segmentSize, eagerClose = true)`; [`Interleave::eager_close`]).
    ///
    /// # Errors
    ///
    /// [`ArgumentError::Zero`] when `segment_size` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::graph::JunctionOps;
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("interleave-eager").unwrap();
    /// let mat = Materializer::new(&system);
    /// let got = Source::range(1u32..=3)
    ///     .interleave_eager(Source::repeat(0u32), 1)
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![1, 0, 2, 0, 3]));
    /// system.terminate().wait().unwrap();
    /// ```
    fn interleave_eager<M: 'static>(
        self,
        other: Source<Self::Out, M>,
        segment_size: usize,
    ) -> Result<Self::Repr<Self::Out>, ArgumentError> {
        let stage = Interleave::<Self::Out, 2>::new(segment_size)?.eager_close();
        Ok(self.via_flow(uniform_with_other(stage, other, 0)))
    }

    /// This stream's elements; if it completes empty, `other`'s instead
    /// ([`OrElse`]).
    fn or_else<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out> {
        self.via_flow(uniform_with_other(OrElse::<Self::Out>::new(), other, 0))
    }

    /// Each element with its position, from 0.
    fn zip_with_index(self) -> Self::Repr<(Self::Out, u64)> {
        let mut index = 0u64;
        self.map(move |x| {
            let at = index;
            index += 1;
            (x, at)
        })
    }

    /// The elements for which `divert` is true go to `sink` instead
    /// ([`Partition`] with eager cancel); back-pressure from either side
    /// holds both, and the stream stops when either cancels.
    fn divert_to<M, F>(self, sink: Sink<Self::Out, M>, divert: F) -> Self::Repr<Self::Out>
    where
        M: 'static,
        F: Fn(&Self::Out) -> bool + Clone + Send + Sync + 'static,
    {
        let mut b = GraphBuilder::new();
        let split = b.add(
            Partition::<Self::Out, 2, _>::new(move |x: &Self::Out| usize::from(divert(x)))
                .eager_cancel(),
        );
        let sink = b.sink(sink);
        let [on, side] = split.outs();
        b.connect(side, sink).expect(WIRED);
        self.via_flow(b.build_flow(split.inlet(), on, |_| ()).expect(WIRED))
    }

    /// A copy of each element to `sink` when it has asked ([`WireTap`]):
    /// a slow `sink` misses elements and never slows this stream.
    fn wire_tap<M: 'static>(self, sink: Sink<Self::Out, M>) -> Self::Repr<Self::Out>
    where
        Self::Out: Clone,
    {
        self.via_flow(tapped(sink))
    }

    /// Every element also to `sink` ([`Broadcast`] with eager cancel): the
    /// stream goes at the slower one's speed and stops when either cancels.
    fn also_to<M: 'static>(self, sink: Sink<Self::Out, M>) -> Self::Repr<Self::Out>
    where
        Self::Out: Clone,
    {
        self.via_flow(also(sink))
    }
}

impl<F: FlowOps> JunctionOps for F {}

/// A flow passing everything on and copying to `sink` when it asks; its
/// materialized value is `sink`'s.
pub(super) fn tapped<T: Clone + Send + 'static, M: 'static>(sink: Sink<T, M>) -> Flow<T, T, M> {
    let mut b = GraphBuilder::new();
    let tap = b.add(WireTap::<T>::new());
    let (sink, key) = b.sink_mat(sink);
    let [main, side] = tap.outs();
    b.connect(side, sink).expect(WIRED);
    b.build_flow(tap.inlet(), main, move |m| m.take(&key))
        .expect(WIRED)
}

/// A flow passing everything on and to `sink` too (eager cancel); its
/// materialized value is `sink`'s.
pub(super) fn also<T: Clone + Send + 'static, M: 'static>(sink: Sink<T, M>) -> Flow<T, T, M> {
    let mut b = GraphBuilder::new();
    let broadcast = b.add(Broadcast::<T, 2>::new().eager_cancel());
    let (sink, key) = b.sink_mat(sink);
    let [on, side] = broadcast.outs();
    b.connect(side, sink).expect(WIRED);
    b.build_flow(broadcast.inlet(), on, move |m| m.take(&key))
        .expect(WIRED)
}

impl<T: Clone + Send + 'static> Sink<T, ()> {
    /// One sink that gives every element to each of these sinks ([`Broadcast`]):
    /// it goes at the slowest one's speed, and runs while any of them does.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("sink-combine").unwrap();
    /// let mat = Materializer::new(&system);
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let (tx2, tx3) = (tx.clone(), tx.clone());
    /// let both = Sink::combine(
    ///     Sink::fold((), move |(), x: u32| tx.send(("a", x)).unwrap()),
    ///     Sink::fold((), move |(), x: u32| tx2.send(("b", x)).unwrap()),
    ///     [Sink::fold((), move |(), x: u32| tx3.send(("c", x)).unwrap())],
    /// );
    /// Source::single(5u32).run_with(both, &mat);
    /// let mut seen: Vec<_> = (0..3).map(|_| rx.recv().unwrap()).collect();
    /// seen.sort();
    /// assert_eq!(seen, vec![("a", 5), ("b", 5), ("c", 5)]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn combine<M1: 'static, M2: 'static, M: 'static>(
        first: Sink<T, M1>,
        second: Sink<T, M2>,
        rest: impl IntoIterator<Item = Sink<T, M>>,
    ) -> Sink<T, ()> {
        let both = broadcast_to(first, second);
        rest.into_iter().fold(both, broadcast_to)
    }
}

impl<T: Send + 'static> Source<T, ()> {
    /// One element of each source at a time, as an array ([`ZipN`]);
    /// completes when any source does. The sources' values are dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("zip-n-fluent").unwrap();
    /// let mat = Materializer::new(&system);
    /// let got = Source::zip_n([Source::range(0u8..2), Source::range(5u8..)]).run_with(Sink::collect(), &mat);
    /// assert_eq!(got.wait(), Ok(vec![[0, 5], [1, 6]]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn zip_n<M: 'static, const N: usize>(mut sources: [Source<T, M>; N]) -> Source<[T; N], ()> {
        zipped(ZipN::<T, N>::new(), &mut sources)
    }

    /// One element of each source at a time, combined by `f`
    /// ([`ZipWithN`]); completes when any source does.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("zip-with-n-fluent").unwrap();
    /// let mat = Materializer::new(&system);
    /// let max = Source::zip_with_n([Source::from_iter([1u8, 9]), Source::from_iter([4, 2])], |xs| xs.into_iter().max());
    /// assert_eq!(max.run_with(Sink::collect(), &mat).wait(), Ok(vec![Some(4), Some(9)]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn zip_with_n<O, F, M, const N: usize>(
        mut sources: [Source<T, M>; N],
        f: F,
    ) -> Source<O, ()>
    where
        O: Send + 'static,
        F: FnMut([T; N]) -> O + Clone + Send + Sync + 'static,
        M: 'static,
    {
        zipped(ZipWithN::new(f), &mut sources)
    }

    /// The elements of every source, as they arrive (a balanced tree of
    /// [`Merge`]s, one fused merge when every source fuses). Any number
    /// of sources: the tree is built without recursion and is only
    /// log2(n) deep.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("combine").unwrap();
    /// let mat = Materializer::new(&system);
    /// let parts = vec![Source::range(5u32..7), Source::range(9u32..10)];
    /// let mut all = Source::combine(Source::single(1u32), Source::single(2), parts)
    ///     .run_with(Sink::collect(), &mat)
    ///     .wait()
    ///     .unwrap();
    /// all.sort();
    /// assert_eq!(all, vec![1, 2, 5, 6, 9]);
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn combine<M1: 'static, M2: 'static, M: 'static>(
        first: Source<T, M1>,
        second: Source<T, M2>,
        rest: impl IntoIterator<Item = Source<T, M>>,
    ) -> Source<T, ()> {
        // A balanced tree of two-input merges, built level by level: as
        // deep as log2 of the number of sources, so thousands of sources
        // run unfused too (each element passes ~log2(n) merges), and fused
        // the planner splices the merges into one.
        let mut level: Vec<Source<T, ()>> = [
            first.map_materialized_value(|_| ()),
            second.map_materialized_value(|_| ()),
        ]
        .into_iter()
        .chain(rest.into_iter().map(|s| s.map_materialized_value(|_| ())))
        .collect();
        while level.len() > 1 {
            let mut sources = level.into_iter();
            let mut next = Vec::with_capacity(sources.len().div_ceil(2));
            while let Some(a) = sources.next() {
                next.push(match sources.next() {
                    Some(b) => a.merge(b),
                    None => a,
                });
            }
            level = next;
        }
        level.pop().expect("two sources at least")
    }
}

/// A sink broadcasting to `a` and `b` (values dropped).
fn broadcast_to<T: Clone + Send + 'static, A: 'static, B: 'static>(
    a: Sink<T, A>,
    b: Sink<T, B>,
) -> Sink<T, ()> {
    let mut builder = GraphBuilder::new();
    let broadcast = builder.add(Broadcast::<T, 2>::new());
    let (a, b) = (builder.sink(a), builder.sink(b));
    let [to_a, to_b] = broadcast.outs();
    builder.connect(to_a, a).expect(WIRED);
    builder.connect(to_b, b).expect(WIRED);
    builder.build_sink(broadcast.inlet(), |_| ()).expect(WIRED)
}

/// `sources` into the inputs of `stage`, in order, each taken out in
/// place (left as a blueprint that is never run): an array of thousands
/// of sources moved by value would be copied into each frame it passes
/// in a debug build, overflowing the caller's stack.
fn zipped<T, O, S, M, const N: usize>(stage: S, sources: &mut [Source<T, M>; N]) -> Source<O, ()>
where
    T: Send + 'static,
    O: Send + 'static,
    M: 'static,
    S: crate::stage::GraphStage<Shape = crate::stage::FanInShapeN<T, O, N>>,
{
    let mut b = GraphBuilder::new();
    let zip = b.add(stage);
    for (i, slot) in sources.iter_mut().enumerate() {
        let taken = Source::from_graph_parts(
            Graph::<()>::empty()
                .map_mat(|()| -> M { unreachable!("a taken-out source never runs") }),
        );
        let out = b.source(std::mem::replace(slot, taken));
        b.connect(out, zip.inlet(i)).expect(WIRED);
    }
    b.build_source(zip.out(), |_| ()).expect(WIRED)
}
