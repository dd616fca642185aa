//! [`ZipWith3`], [`ZipWith4`] and [`ZipWith5`]: one element of each of
//! three to five inputs of their own types, combined (Akka's `ZipWith`
//! for more inputs).

use std::marker::PhantomData;

use super::zip_row::ZipLogic;
use crate::stage::{
    FanInShape3, FanInShape4, FanInShape5, GraphStage, GraphStageLogic, MatContext,
};

/// A zip junction over inputs of the types `$t`, combined by an `FnMut`
/// taking one element of each.
macro_rules! zip_with {
    ($(#[$doc:meta])* $name:ident, $shape:ident, $($t:ident $x:ident),+) => {
        $(#[$doc])*
        pub struct $name<$($t,)+ O, F> {
            f: F,
            _t: PhantomData<fn($($t),+) -> O>,
        }

        impl<$($t,)+ O, F: FnMut($($t),+) -> O> $name<$($t,)+ O, F> {
            /// The zip with `f` (cloned for each run, so each run starts
            /// from the state it was given).
            pub fn new(f: F) -> Self {
                Self { f, _t: PhantomData }
            }
        }

        impl<$($t,)+ O, F> std::fmt::Debug for $name<$($t,)+ O, F> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($name))
            }
        }

        impl<$($t,)+ O, F> GraphStage for $name<$($t,)+ O, F>
        where
            $($t: Send + 'static,)+
            O: Send + 'static,
            F: FnMut($($t),+) -> O + Clone + Send + Sync + 'static,
        {
            type Shape = $shape<$($t,)+ O>;
            type Mat = ();

            fn name(&self) -> &'static str {
                "zip"
            }

            fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
                let mut f = self.f.clone();
                (ZipLogic::<($($t,)+), O, _>::boxed(move |($($x,)+)| f($($x),+)), ())
            }

            /// All inputs fused iterators: one element of each, combined.
            fn fused_fan_in(&self) -> Option<crate::fusion::FusedFanIn> {
                let mut f = self.f.clone();
                Some(crate::fusion::ZipFanIn::<($($t,)+), O, _>::hint(move |($($x,)+)| f($($x),+)))
            }
        }
    };
}

zip_with!(
    /// Combines one element of each of its three inputs, of their own
    /// types, with `f` (Akka's `ZipWith` for three inputs). Every input is
    /// asked when downstream asks (back-pressure: no input runs ahead by
    /// more than one element); completes as soon as an input completes
    /// with no element waiting (the others' extra elements are dropped);
    /// fails when any input fails; cancels every input when downstream
    /// cancels. Its ports are `in0()`, `in1()`, `in2()` and `out()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::graph::{GraphBuilder, ZipWith3};
    /// use weir_streams::prelude::*;
    ///
    /// # fn main() -> Result<(), weir_streams::GraphError> {
    /// let system = weir_actor::ActorSystem::new("zip-with-3").unwrap();
    /// let mat = Materializer::new(&system);
    /// let mut b = GraphBuilder::new();
    /// let zip = b.add(ZipWith3::new(|name: String, n: u32, loud: bool| {
    ///     let line = format!("{name} x{n}");
    ///     if loud { line.to_uppercase() } else { line }
    /// }));
    /// let names = b.source(Source::from_iter(["ada".to_string(), "bob".to_string()]));
    /// let counts = b.source(Source::range(1u32..));
    /// let loud = b.source(Source::from_iter([false, true, false]));
    /// b.connect(names, zip.in0())?;
    /// b.connect(counts, zip.in1())?;
    /// b.connect(loud, zip.in2())?;
    /// let lines = b.build_source(zip.out(), |_| ())?;
    /// let got = lines.run_with(Sink::collect(), &mat).wait();
    /// assert_eq!(got, Ok(vec!["ada x1".to_string(), "BOB X2".to_string()]));
    /// system.terminate().wait().unwrap();
    /// # Ok(())
    /// # }
    /// ```
    ZipWith3, FanInShape3, A a, B b, C c
);

zip_with!(
    /// Combines one element of each of its four inputs, of their own
    /// types, with `f`; otherwise as [`ZipWith3`]. Its ports are `in0()`
    /// .. `in3()` and `out()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::graph::{GraphBuilder, ZipWith4};
    /// use weir_streams::prelude::*;
    ///
    /// # fn main() -> Result<(), weir_streams::GraphError> {
    /// let system = weir_actor::ActorSystem::new("zip-with-4").unwrap();
    /// let mat = Materializer::new(&system);
    /// let mut b = GraphBuilder::new();
    /// let zip = b.add(ZipWith4::new(|a: u8, b: u16, c: u32, d: u64| u64::from(a) + u64::from(b) + u64::from(c) + d));
    /// let (a, bb) = (b.source(Source::single(1u8)), b.source(Source::single(20u16)));
    /// let (c, d) = (b.source(Source::single(300u32)), b.source(Source::single(4000u64)));
    /// b.connect(a, zip.in0())?;
    /// b.connect(bb, zip.in1())?;
    /// b.connect(c, zip.in2())?;
    /// b.connect(d, zip.in3())?;
    /// let sums = b.build_source(zip.out(), |_| ())?;
    /// assert_eq!(sums.run_with(Sink::collect(), &mat).wait(), Ok(vec![4321]));
    /// system.terminate().wait().unwrap();
    /// # Ok(())
    /// # }
    /// ```
    ZipWith4, FanInShape4, A a, B b, C c, D d
);

zip_with!(
    /// Combines one element of each of its five inputs, of their own
    /// types, with `f`; otherwise as [`ZipWith3`]. Its ports are `in0()`
    /// .. `in4()` and `out()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::graph::{GraphBuilder, ZipWith5};
    /// use weir_streams::prelude::*;
    ///
    /// # fn main() -> Result<(), weir_streams::GraphError> {
    /// let system = weir_actor::ActorSystem::new("zip-with-5").unwrap();
    /// let mat = Materializer::new(&system);
    /// let mut b = GraphBuilder::new();
    /// let zip = b.add(ZipWith5::new(|a: char, b: char, c: char, d: char, e: char| {
    ///     [a, b, c, d, e].iter().collect::<String>()
    /// }));
    /// for (letters, inlet) in ["wa", "ex", "ia", "rm", "sp"].into_iter().zip([zip.in0(), zip.in1(), zip.in2(), zip.in3(), zip.in4()]) {
    ///     let source = b.source(Source::from_iter(letters.chars().collect::<Vec<_>>()));
    ///     b.connect(source, inlet)?;
    /// }
    /// let words = b.build_source(zip.out(), |_| ())?;
    /// let got = words.run_with(Sink::collect(), &mat).wait();
    /// assert_eq!(got, Ok(vec!["weirs".to_string(), "axamp".to_string()]));
    /// system.terminate().wait().unwrap();
    /// # Ok(())
    /// # }
    /// ```
    ZipWith5, FanInShape5, A a, B b, C c, D d, E e
);
