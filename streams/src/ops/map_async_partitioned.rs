//! `map_async_partitioned` (Pekko 1.1's `mapAsyncPartitioned`): the
//! `map_async` machinery with a partitioner that lets one element per
//! partition be in flight; see `map_async`'s module docs.

use std::future::Future;
use std::hash::Hash;

use super::map_async::{MapAsync, Partitioner};
use crate::error::StreamError;
use crate::stage::{GraphStageLogic, SupervisionStrategy};

/// Partitions by `PF`'s answer: elements with equal partitions run one at a time.
#[derive(Clone)]
pub(crate) struct ByKey<PF>(PF);

impl<T, P, PF> Partitioner<T> for ByKey<PF>
where
    P: Clone + Eq + Hash + Send + 'static,
    PF: FnMut(&T) -> P + Clone + Send + 'static,
{
    type Key = P;
    const EXCLUSIVE: bool = true;
    fn key(&mut self, element: &T) -> P {
        (self.0)(element)
    }
}

/// The logic of `map_async_partitioned`: results in input order.
pub(crate) fn partitioned<T, U, P, PF, F, Fut>(
    parallelism: usize,
    partition: &PF,
    f: &F,
    strategy: Option<&SupervisionStrategy>,
) -> impl GraphStageLogic + use<T, U, P, PF, F, Fut>
where
    T: Send + 'static,
    U: Send + 'static,
    P: Clone + Eq + Hash + Send + 'static,
    PF: FnMut(&T) -> P + Clone + Send + 'static,
    F: FnMut(T, P) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<U, StreamError>> + Send + 'static,
{
    MapAsync::new(parallelism, f, &ByKey(partition.clone()), true, strategy)
}
