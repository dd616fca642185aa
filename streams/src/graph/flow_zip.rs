//! [`Flow::zip_n`] and [`Flow::zip_with_n`]: a flow's output zipped with
//! sources, one element of each per row (the flow's form of
//! [`Source::zip_n`] and [`Source::zip_with_n`]).

use super::builder::GraphBuilder;
use super::junctions::ZipWithN;
use crate::blueprint::{Flow, Source};
use crate::ops::FlowOps;

const WIRED: &str = "a junction flow has every other port connected";

mod sealed {
    pub trait Sealed {}
}

/// The other inputs of [`Flow::zip_n`] and [`Flow::zip_with_n`]: an array
/// of 1 to 15 sources of the flow's element type `T`. A row of `K`
/// sources is an array `[T; K + 1]`: the flow's element first, then one
/// element of each source in array order. (Sealed: implemented for
/// `[Source<T, M>; K]`, `K` in `1..=15`.)
///
/// # Examples
///
/// ```
/// use weir_streams::graph::ZipSources;
/// use weir_streams::prelude::*;
///
/// fn row_width<T: Send + 'static, S: ZipSources<T>>(_: &S) -> usize {
///     std::mem::size_of::<S::Row>() / std::mem::size_of::<T>()
/// }
/// assert_eq!(row_width(&[Source::single(1u64), Source::single(2)]), 3);
/// ```
pub trait ZipSources<T>: sealed::Sealed {
    /// One element of the flow and of each source: `[T; K + 1]`.
    type Row: Send + 'static;

    /// A flow of the rows of its input zipped with these sources,
    /// combined by `f`.
    #[doc(hidden)]
    fn zip_flow<O, F>(self, f: F) -> Flow<T, O>
    where
        O: Send + 'static,
        F: FnMut(Self::Row) -> O + Clone + Send + Sync + 'static;
}

/// `ZipSources` for arrays of `$k` sources, making rows of `$w = $k + 1`.
macro_rules! zip_sources {
    ($($k:literal => $w:literal),+) => {$(
        impl<T: Send + 'static, M: 'static> sealed::Sealed for [Source<T, M>; $k] {}

        impl<T: Send + 'static, M: 'static> ZipSources<T> for [Source<T, M>; $k] {
            type Row = [T; $w];

            fn zip_flow<O, F>(self, f: F) -> Flow<T, O>
            where
                O: Send + 'static,
                F: FnMut(Self::Row) -> O + Clone + Send + Sync + 'static,
            {
                let mut b = GraphBuilder::new();
                let zip = b.add(ZipWithN::<T, O, F, $w>::new(f));
                let [mine, others @ ..] = zip.ins();
                for (source, inlet) in self.into_iter().zip(others) {
                    let out = b.source(source);
                    b.connect(out, inlet).expect(WIRED);
                }
                b.build_flow(mine, zip.out(), |_| ()).expect(WIRED)
            }
        }
    )+};
}

zip_sources!(
    1 => 2, 2 => 3, 3 => 4, 4 => 5, 5 => 6, 6 => 7, 7 => 8, 8 => 9,
    9 => 10, 10 => 11, 11 => 12, 12 => 13, 13 => 14, 14 => 15, 15 => 16
);

fn same<R>(row: R) -> R {
    row
}

impl<I: Send + 'static, T: Send + 'static, M: 'static> Flow<I, T, M> {
    /// Each element of this flow with one element of each of `others`, as
    /// an array (this flow's element first; [`ZipN`](super::ZipN));
    /// completes when this flow or any source does (the sources' values
    /// are dropped). The sources are asked for an element only when
    /// downstream asks for a row, as this flow's upstream is.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("flow-zip-n").unwrap();
    /// let mat = Materializer::new(&system);
    /// let rows = Flow::<u32>::new().map(|x| x * 2).zip_n([Source::range(10u32..), Source::repeat(0)]);
    /// let got = Source::range(1u32..=2).via(rows).run_with(Sink::collect(), &mat).wait();
    /// assert_eq!(got, Ok(vec![[2, 10, 0], [4, 11, 0]]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn zip_n<S: ZipSources<T>>(self, others: S) -> Flow<I, S::Row, M> {
        self.via_flow(others.zip_flow(same::<S::Row> as fn(S::Row) -> S::Row))
    }

    /// Each element of this flow and one element of each of `others`,
    /// combined by `f` (this flow's element first in the row;
    /// [`ZipWithN`]); otherwise as [`zip_n`](Self::zip_n).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("flow-zip-with-n").unwrap();
    /// let mat = Materializer::new(&system);
    /// let sums = Flow::<u32>::new().zip_with_n([Source::range(10u32..13)], |[x, y]| x + y);
    /// let got = Source::repeat(1u32).via(sums).run_with(Sink::collect(), &mat).wait();
    /// assert_eq!(got, Ok(vec![11, 12, 13]));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn zip_with_n<S, O, F>(self, others: S, f: F) -> Flow<I, O, M>
    where
        S: ZipSources<T>,
        O: Send + 'static,
        F: FnMut(S::Row) -> O + Clone + Send + Sync + 'static,
    {
        self.via_flow(others.zip_flow(f))
    }
}
