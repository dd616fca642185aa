//! The shapes of fan-in junctions with three to five inputs of their own
//! types ([`ZipWith3`](crate::graph::ZipWith3) ..
//! [`ZipWith5`](crate::graph::ZipWith5)), one per arity, as Akka's
//! `FanInShape3` .. `FanInShape5`.

use super::{Inlet, Outlet, Shape, SlotKind, sealed};

/// A fan-in shape whose inlets each have their own element type.
macro_rules! fan_in_shape {
    ($(#[$doc:meta])* $name:ident, $count:literal, $($in:ident: $t:ident = $i:literal),+) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<$($t,)+ O> {
            $(
                #[doc = concat!("Input ", stringify!($i), ".")]
                pub $in: Inlet<$t>,
            )+
            /// Where elements leave.
            pub out: Outlet<O>,
        }

        impl<$($t,)+ O> $name<$($t,)+ O> {
            #[doc = concat!("Inlets `0..", stringify!($count), "` in order, outlet 0.")]
            pub const fn new() -> Self {
                Self {
                    $($in: Inlet::new($i),)+
                    out: Outlet::new(0),
                }
            }
        }

        impl<$($t,)+ O> Default for $name<$($t,)+ O> {
            fn default() -> Self {
                Self::new()
            }
        }

        impl<$($t,)+ O> sealed::Sealed for $name<$($t,)+ O> {}

        impl<$($t: Send + 'static,)+ O: Send + 'static> Shape for $name<$($t,)+ O> {
            const INLETS: u16 = $count;
            const OUTLETS: u16 = 1;
            fn outlet_slot(_: u16) -> SlotKind {
                SlotKind::of::<O>()
            }
        }
    };
}

fan_in_shape!(
    /// Three inlets of their own types and one outlet: the shape of
    /// [`ZipWith3`](crate::graph::ZipWith3).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::stage::FanInShape3;
    ///
    /// let shape = FanInShape3::<u8, String, bool, u64>::new();
    /// assert_eq!(shape.in2.port(), weir_streams::stage::Inlet::<bool>::new(2).port());
    /// ```
    FanInShape3, 3, in0: A = 0, in1: B = 1, in2: C = 2
);
fan_in_shape!(
    /// Four inlets of their own types and one outlet: the shape of
    /// [`ZipWith4`](crate::graph::ZipWith4).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::stage::FanInShape4;
    ///
    /// let shape = FanInShape4::<u8, u16, u32, u64, ()>::new();
    /// assert_eq!(shape.in3.port(), weir_streams::stage::Inlet::<u64>::new(3).port());
    /// ```
    FanInShape4, 4, in0: A = 0, in1: B = 1, in2: C = 2, in3: D = 3
);
fan_in_shape!(
    /// Five inlets of their own types and one outlet: the shape of
    /// [`ZipWith5`](crate::graph::ZipWith5).
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::stage::FanInShape5;
    ///
    /// let shape = FanInShape5::<u8, u16, u32, u64, char, ()>::new();
    /// assert_eq!(shape.in4.port(), weir_streams::stage::Inlet::<char>::new(4).port());
    /// ```
    FanInShape5, 5, in0: A = 0, in1: B = 1, in2: C = 2, in3: D = 3, in4: E = 4
);
