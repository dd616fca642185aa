//! The materialized-value forms of the fluent junctions (Pekko's
//! `concatMat`, `mergeMat`, `zipMat`, `alsoToMat`, `wireTapMat`,
//! `interleaveMat`, `orElseMat`): as [`JunctionOps`](super::JunctionOps)'s
//! methods, with this blueprint's value and the other's combined by a
//! function, as `via_mat` / `to_mat` take one (`Keep::left`, `Keep::both`, ...).
//!
//! They are inherent methods of `Source` and `Flow` (one macro writes
//! both), since the result's materialized value type is new.

use super::fluent::{also, tapped, uniform_with_other, with_other};
use super::junctions::{Concat, Interleave, Merge, OrElse, Zip};
use crate::blueprint::{Flow, Sink, Source};
use crate::error::ArgumentError;

macro_rules! mat_forms {
    ($blueprint:ident $(, $in:ident)?) => {
        impl<$($in: Send + 'static,)? Out: Send + 'static, Mat: 'static> $blueprint<$($in,)? Out, Mat> {
            /// [`concat`](super::JunctionOps::concat), with this value and
            /// `other`'s combined by `combine`.
            ///
            /// ```
            /// use weir_streams::prelude::*;
            ///
            /// let system = weir_actor::ActorSystem::new("concat-mat").unwrap();
            /// let mat = Materializer::new(&system);
            /// let (probe, out) = Source::range(1u32..=2)
            ///     .concat_mat(Source::single(9u32).map_materialized_value(|()| "other"), Keep::right)
            ///     .to_mat(Sink::collect(), Keep::both)
            ///     .run(&mat);
            /// assert_eq!((probe, out.wait()), ("other", Ok(vec![1, 2, 9])));
            /// system.terminate().wait().unwrap();
            /// ```
            pub fn concat_mat<M2: 'static, M3: 'static>(
                self,
                other: Source<Out, M2>,
                combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
            ) -> $blueprint<$($in,)? Out, M3> {
                self.via_mat(uniform_with_other(Concat::<Out, 2>::new(), other, 0), combine)
            }

            /// [`merge`](super::JunctionOps::merge), with this value and
            /// `other`'s combined by `combine`.
            ///
            /// ```
            /// use weir_streams::prelude::*;
            ///
            /// let system = weir_actor::ActorSystem::new("merge-mat").unwrap();
            /// let mat = Materializer::new(&system);
            /// let (n, out) = Source::single(1u32)
            ///     .map_materialized_value(|()| 1)
            ///     .merge_mat(Source::single(2u32).map_materialized_value(|()| 2), |a, b| a + b)
            ///     .to_mat(Sink::collect(), Keep::both)
            ///     .run(&mat);
            /// let mut all = out.wait().unwrap();
            /// all.sort();
            /// assert_eq!((n, all), (3, vec![1, 2]));
            /// system.terminate().wait().unwrap();
            /// ```
            pub fn merge_mat<M2: 'static, M3: 'static>(
                self,
                other: Source<Out, M2>,
                combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
            ) -> $blueprint<$($in,)? Out, M3> {
                self.via_mat(uniform_with_other(Merge::<Out, 2>::new(), other, 0), combine)
            }

            /// [`zip`](super::JunctionOps::zip), with this value and
            /// `other`'s combined by `combine`.
            ///
            /// ```
            /// use weir_streams::prelude::*;
            ///
            /// let system = weir_actor::ActorSystem::new("zip-mat").unwrap();
            /// let mat = Materializer::new(&system);
            /// let (tag, out) = Source::range(1u32..=2)
            ///     .zip_mat(Source::from_iter(["a", "b"]).map_materialized_value(|()| 'z'), Keep::right)
            ///     .to_mat(Sink::collect(), Keep::both)
            ///     .run(&mat);
            /// assert_eq!((tag, out.wait()), ('z', Ok(vec![(1, "a"), (2, "b")])));
            /// system.terminate().wait().unwrap();
            /// ```
            pub fn zip_mat<U: Send + 'static, M2: 'static, M3: 'static>(
                self,
                other: Source<U, M2>,
                combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
            ) -> $blueprint<$($in,)? (Out, U), M3> {
                self.via_mat(with_other(Zip::new(), other, true), combine)
            }

            /// [`interleave`](super::JunctionOps::interleave), with this
            /// value and `other`'s combined by `combine`.
            ///
            /// # Errors
            ///
            /// [`ArgumentError::Zero`] when `segment_size` is 0.
            ///
            /// ```
            /// use weir_streams::prelude::*;
            ///
            /// let system = weir_actor::ActorSystem::new("interleave-mat").unwrap();
            /// let mat = Materializer::new(&system);
            /// let (tag, out) = Source::range(1u32..=4)
            ///     .interleave_mat(Source::range(7u32..=8).map_materialized_value(|()| 'i'), 2, Keep::right)
            ///     .unwrap()
            ///     .to_mat(Sink::collect(), Keep::both)
            ///     .run(&mat);
            /// assert_eq!((tag, out.wait()), ('i', Ok(vec![1, 2, 7, 8, 3, 4])));
            /// system.terminate().wait().unwrap();
            /// ```
            pub fn interleave_mat<M2: 'static, M3: 'static>(
                self,
                other: Source<Out, M2>,
                segment_size: usize,
                combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
            ) -> Result<$blueprint<$($in,)? Out, M3>, ArgumentError> {
                let stage = Interleave::<Out, 2>::new(segment_size)?;
                Ok(self.via_mat(uniform_with_other(stage, other, 0), combine))
            }

            /// [`or_else`](super::JunctionOps::or_else), with this value
            /// and `other`'s combined by `combine`.
            ///
            /// ```
            /// use weir_streams::prelude::*;
            ///
            /// let system = weir_actor::ActorSystem::new("or-else-mat").unwrap();
            /// let mat = Materializer::new(&system);
            /// let (tag, out) = Source::<u32>::empty()
            ///     .or_else_mat(Source::single(5u32).map_materialized_value(|()| "fallback"), Keep::right)
            ///     .to_mat(Sink::collect(), Keep::both)
            ///     .run(&mat);
            /// assert_eq!((tag, out.wait()), ("fallback", Ok(vec![5])));
            /// system.terminate().wait().unwrap();
            /// ```
            pub fn or_else_mat<M2: 'static, M3: 'static>(
                self,
                other: Source<Out, M2>,
                combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
            ) -> $blueprint<$($in,)? Out, M3> {
                self.via_mat(uniform_with_other(OrElse::<Out>::new(), other, 0), combine)
            }

            /// [`also_to`](super::JunctionOps::also_to), with this value
            /// and `sink`'s combined by `combine`.
            ///
            /// ```
            /// use weir_streams::prelude::*;
            ///
            /// let system = weir_actor::ActorSystem::new("also-to-mat").unwrap();
            /// let mat = Materializer::new(&system);
            /// let (count, out) = Source::range(1u32..=3)
            ///     .also_to_mat(Sink::count(), Keep::right)
            ///     .to_mat(Sink::collect(), Keep::both)
            ///     .run(&mat);
            /// assert_eq!((count.wait(), out.wait()), (Ok(3), Ok(vec![1, 2, 3])));
            /// system.terminate().wait().unwrap();
            /// ```
            pub fn also_to_mat<M2: 'static, M3: 'static>(
                self,
                sink: Sink<Out, M2>,
                combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
            ) -> $blueprint<$($in,)? Out, M3>
            where
                Out: Clone,
            {
                self.via_mat(also(sink), combine)
            }

            /// [`wire_tap`](super::JunctionOps::wire_tap), with this value
            /// and `sink`'s combined by `combine`.
            ///
            /// ```
            /// use weir_streams::prelude::*;
            ///
            /// let system = weir_actor::ActorSystem::new("wire-tap-mat").unwrap();
            /// let mat = Materializer::new(&system);
            /// let (tapped, out) = Source::range(1u32..=3)
            ///     .wire_tap_mat(Sink::count(), Keep::right)
            ///     .to_mat(Sink::collect(), Keep::both)
            ///     .run(&mat);
            /// assert_eq!(out.wait(), Ok(vec![1, 2, 3]));
            /// assert!(tapped.wait().unwrap() <= 3, "a tap may miss elements");
            /// system.terminate().wait().unwrap();
            /// ```
            pub fn wire_tap_mat<M2: 'static, M3: 'static>(
                self,
                sink: Sink<Out, M2>,
                combine: impl Fn(Mat, M2) -> M3 + Send + Sync + 'static,
            ) -> $blueprint<$($in,)? Out, M3>
            where
                Out: Clone,
            {
                self.via_mat(tapped(sink), combine)
            }
        }
    };
}

mat_forms!(Source);
mat_forms!(Flow, In);
