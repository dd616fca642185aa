//! [`JunctionOps`]: the fluent forms of the junctions, on every `Source`
//! and `Flow`.

use super::builder::GraphBuilder;
use super::junctions::{Broadcast, Concat, Merge, Zip, ZipWith};
use crate::{Flow, FlowOps, Sink, Source};

const WIRED: &str = "a junction flow has every other port connected";

/// A flow from input `mine` of a two-input junction to its output, with
/// `other` feeding its other input.
fn with_other<T, U, O, S>(
    stage: S,
    other: Source<U, impl Sized + 'static>,
    mine_first: bool,
) -> Flow<T, O>
where
    T: Send + 'static,
    U: Send + 'static,
    O: Send + 'static,
    S: crate::stage::GraphStage<Shape = crate::stage::FanInShape2<T, U, O>>,
{
    debug_assert!(mine_first, "two-type junctions take this stream first");
    let mut b = GraphBuilder::new();
    let junction = b.add(stage);
    let other = b.source(other);
    b.connect(other, junction.in1()).expect(WIRED);
    b.build_flow(junction.in0(), junction.out(), |_| ()).expect(WIRED)
}

/// A flow into input `mine` of a two-input uniform junction, with `other`
/// feeding the other input.
fn uniform_with_other<T, S>(stage: S, other: Source<T, impl Sized + 'static>, mine: usize) -> Flow<T, T>
where
    T: Send + 'static,
    S: crate::stage::GraphStage<Shape = crate::stage::UniformFanInShape<T, 2>>,
{
    let mut b = GraphBuilder::new();
    let junction = b.add(stage);
    let other = b.source(other);
    let ins = junction.ins();
    b.connect(other, ins[1 - mine]).expect(WIRED);
    b.build_flow(ins[mine], junction.out(), |_| ()).expect(WIRED)
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

    /// This stream's elements, then `other`'s ([`Concat`]): `other` is
    /// asked for elements only after this stream completes.
    fn concat<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out> {
        self.via_flow(uniform_with_other(Concat::<Self::Out, 2>::new(), other, 0))
    }

    /// `other`'s elements, then this stream's ([`Concat`]).
    fn prepend<M: 'static>(self, other: Source<Self::Out, M>) -> Self::Repr<Self::Out> {
        self.via_flow(uniform_with_other(Concat::<Self::Out, 2>::new(), other, 1))
    }

    /// Every element also to `sink` ([`Broadcast`] with eager cancel): the
    /// stream goes at the slower one's speed and stops when either cancels.
    fn also_to<M: 'static>(self, sink: Sink<Self::Out, M>) -> Self::Repr<Self::Out>
    where
        Self::Out: Clone,
    {
        let mut b = GraphBuilder::new();
        let broadcast = b.add(Broadcast::<Self::Out, 2>::new().eager_cancel());
        let sink = b.sink(sink);
        let [on, side] = broadcast.outs();
        b.connect(side, sink).expect(WIRED);
        self.via_flow(b.build_flow(broadcast.inlet(), on, |_| ()).expect(WIRED))
    }
}

impl<F: FlowOps> JunctionOps for F {}

impl<T: Send + 'static> Source<T, ()> {
    /// The elements of every source, as they arrive (nested [`Merge`]s).
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
        let merged = first.map_materialized_value(|_| ()).merge(second);
        rest.into_iter().fold(merged, |all, next| all.merge(next))
    }
}
