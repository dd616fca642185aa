//! [`AsyncOps`]: the operators that run a future per element
//! (`map_async`, `map_async_unordered`, `map_async_partitioned`), built on
//! [`FlowOps::via_flow`] like the other operator traits.

use std::future::Future;

use super::FlowOps;
use super::util::{at_least_one, logic_flow_with};
use super::{map_async, map_async_partitioned};
use crate::error::{ArgumentError, StreamError};
use crate::stage::Attributes;

/// Operators that run a future per element, at most `parallelism` at a
/// time. Every [`FlowOps`] type has them (they are in the prelude).
pub trait AsyncOps: FlowOps {
    /// Run `f` on each element, at most `parallelism` futures at a time,
    /// emitting results in input order. An `Err` fails the stream.
    ///
    /// `parallelism` is a bound, not an allocation: the stage takes no
    /// element before downstream first asks for one, then keeps up to
    /// `parallelism` futures running (as Pekko's `mapAsync`), and never
    /// more than 65 536, so `usize::MAX` means "as many as the stage
    /// allows" and costs no more than the futures actually in flight.
    ///
    /// # Where the futures run
    ///
    /// The futures are polled inside the stage, on its island's thread,
    /// woken by their wakers. A future that needs a tokio reactor
    /// (`tokio::time::sleep`, tokio sockets, clients built on them) needs
    /// the island's thread inside a tokio runtime's context: build the
    /// system with weir-interop's `TokioContext::tokio_context(handle)`
    /// (or your own `ActorSystemBuilder::thread_context`) and such futures
    /// just work. Without it such a future panics ("there is no reactor
    /// running") and the stream fails with `ErrorKind::Panicked` naming
    /// this stage; the other way is to spawn the work on tokio and return
    /// its `JoinHandle`, which any executor can poll:
    ///
    /// ```text
    /// let tokio = tokio::runtime::Handle::current(); // on the runtime
    /// source.map_async(8, move |id| {
    ///     let job = tokio.spawn(fetch(id)); // runs on tokio, with its reactor
    ///     async move { job.await.map_err(|e| StreamError::msg(e.to_string())) }
    /// })
    /// ```
    ///
    /// A future that only waits on wakers (channels, `std` futures, the
    /// `futures` crate's combinators) needs nothing of the kind.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    ///
    /// Supervision: a panic in `f`, a panic while polling a future and a future's `Err` go to the stage's [`SupervisionStrategy`](crate::SupervisionStrategy): resume and restart drop that element (its slot is freed; restart also takes a fresh clone of `f`), stop fails the stream.
    fn map_async<U, F, Fut>(self, parallelism: usize, f: F) -> Result<Self::Repr<U>, ArgumentError>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
    {
        let flow = map_async::unpartitioned_flow("map_async", parallelism, f, true)?;
        Ok(self.via_flow(flow))
    }

    /// [`map_async`](Self::map_async), emitting results as they finish
    /// (the same bound and the same rule for futures that need a
    /// runtime's reactor).
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    ///
    /// Supervision: as [`map_async`](Self::map_async).
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// let out = Source::range(1u32..=3)
    ///     .map_async_unordered(2, |x| async move { Ok::<_, StreamError>(x * 2) })
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// let mut all = out.wait().unwrap();
    /// all.sort_unstable();
    /// assert_eq!(all, vec![2, 4, 6]);
    /// # system.terminate().wait().unwrap();
    /// ```
    fn map_async_unordered<U, F, Fut>(
        self,
        parallelism: usize,
        f: F,
    ) -> Result<Self::Repr<U>, ArgumentError>
    where
        U: Send + 'static,
        F: FnMut(Self::Out) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
    {
        let flow = map_async::unpartitioned_flow("map_async_unordered", parallelism, f, false)?;
        Ok(self.via_flow(flow))
    }

    /// [`map_async`](Self::map_async) with at most one element per
    /// partition in flight (Pekko's `mapAsyncPartitioned`): `partition`
    /// names each element's partition, `f` gets the element and its
    /// partition. An element whose partition has one in the stage (running,
    /// or finished and waiting to be emitted) waits, unstarted; results
    /// come in input order. `parallelism` bounds the elements in the
    /// stage, waiting ones included.
    ///
    /// # Errors
    ///
    /// `ArgumentError::Zero` when `parallelism` is 0.
    ///
    /// Supervision: as [`map_async`](Self::map_async); a panic in
    /// `partition` drops that element likewise.
    ///
    /// ```
    /// use weir_streams::prelude::*;
    /// # let system = weir_actor::ActorSystem::new("doc").unwrap();
    /// # let mat = Materializer::new(&system);
    /// // Per account, one update at a time; different accounts at once.
    /// let out = Source::from_iter(vec![("a", 1u32), ("b", 2), ("a", 3)])
    ///     .map_async_partitioned(4, |(account, _)| *account, |(_, amount), account| async move {
    ///         Ok::<_, StreamError>(format!("{account}+{amount}"))
    ///     })
    ///     .unwrap()
    ///     .run_with(Sink::collect(), &mat);
    /// assert_eq!(out.wait(), Ok(vec!["a+1".to_string(), "b+2".into(), "a+3".into()]));
    /// # system.terminate().wait().unwrap();
    /// ```
    fn map_async_partitioned<U, P, PF, F, Fut>(
        self,
        parallelism: usize,
        partition: PF,
        f: F,
    ) -> Result<Self::Repr<U>, ArgumentError>
    where
        U: Send + 'static,
        P: Clone + Eq + std::hash::Hash + Send + 'static,
        PF: FnMut(&Self::Out) -> P + Clone + Send + Sync + 'static,
        F: FnMut(Self::Out, P) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
    {
        at_least_one(parallelism, "parallelism")?;
        Ok(self.via_flow(logic_flow_with(
            "map_async_partitioned",
            move |attributes: &Attributes| {
                map_async_partitioned::partitioned(
                    parallelism,
                    &partition,
                    &f,
                    attributes.supervision_strategy(),
                )
            },
        )))
    }
}

impl<T: FlowOps> AsyncOps for T {}
