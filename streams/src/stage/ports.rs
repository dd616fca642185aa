//! Typed ports and the shapes made of them.

use std::fmt;
use std::marker::PhantomData;

mod fan_in;

pub use fan_in::{FanInShape3, FanInShape4, FanInShape5};

/// Where a stage receives elements of type `T`.
///
/// A stage's inlets are numbered from 0 in its shape; the logic keeps the
/// `Inlet` it was given and passes it to `grab`, `pull`, `cancel`, ...
pub struct Inlet<T> {
    index: u16,
    _elements: PhantomData<fn(T)>,
}

/// Where a stage emits elements of type `T`.
pub struct Outlet<T> {
    index: u16,
    _elements: PhantomData<fn() -> T>,
}

/// An untyped inlet, as handlers receive it: compare it with an
/// [`Inlet::port`] to tell a stage's inlets apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InPort(pub(crate) u16);

/// An untyped outlet, as handlers receive it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OutPort(pub(crate) u16);

impl<T> Inlet<T> {
    /// The inlet with number `index` in its stage's shape.
    pub const fn new(index: u16) -> Self {
        Self {
            index,
            _elements: PhantomData,
        }
    }

    /// The untyped port, as handlers receive it.
    pub const fn port(&self) -> InPort {
        InPort(self.index)
    }
}

impl<T> Outlet<T> {
    /// The outlet with number `index` in its stage's shape.
    pub const fn new(index: u16) -> Self {
        Self {
            index,
            _elements: PhantomData,
        }
    }

    /// The untyped port, as handlers receive it.
    pub const fn port(&self) -> OutPort {
        OutPort(self.index)
    }
}

impl<T> Clone for Inlet<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Inlet<T> {}
impl<T> Clone for Outlet<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Outlet<T> {}

impl<T> fmt::Debug for Inlet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Inlet<{}>({})", std::any::type_name::<T>(), self.index)
    }
}
impl<T> fmt::Debug for Outlet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Outlet<{}>({})", std::any::type_name::<T>(), self.index)
    }
}

pub use super::slot::SlotKind;

/// The ports of a stage: one of the shapes below (sealed: the interpreter
/// relies on their port counts). A multi-port stage picks a fan-in,
/// fan-out or bidi shape; [`GraphBuilder`](crate::graph::GraphBuilder)
/// connects its ports.
pub trait Shape: sealed::Sealed + Send + 'static {
    /// How many inlets.
    const INLETS: u16;
    /// How many outlets.
    const OUTLETS: u16;
    #[doc(hidden)]
    fn outlet_slot(index: u16) -> SlotKind;
}

mod sealed {
    pub trait Sealed {}
}

/// One outlet: the shape of a source stage.
#[derive(Debug)]
pub struct SourceShape<T> {
    /// Where elements leave.
    pub out: Outlet<T>,
}

/// One inlet and one outlet: the shape of a flow stage.
#[derive(Debug)]
pub struct FlowShape<I, O> {
    /// Where elements arrive.
    pub inlet: Inlet<I>,
    /// Where elements leave.
    pub out: Outlet<O>,
}

/// One inlet: the shape of a sink stage.
#[derive(Debug)]
pub struct SinkShape<T> {
    /// Where elements arrive.
    pub inlet: Inlet<T>,
}

impl<T> SourceShape<T> {
    /// The shape with outlet 0.
    pub const fn new() -> Self {
        Self {
            out: Outlet::new(0),
        }
    }
}
impl<T> Default for SourceShape<T> {
    fn default() -> Self {
        Self::new()
    }
}
impl<I, O> FlowShape<I, O> {
    /// The shape with inlet 0 and outlet 0.
    pub const fn new() -> Self {
        Self {
            inlet: Inlet::new(0),
            out: Outlet::new(0),
        }
    }
}
impl<I, O> Default for FlowShape<I, O> {
    fn default() -> Self {
        Self::new()
    }
}
impl<T> SinkShape<T> {
    /// The shape with inlet 0.
    pub const fn new() -> Self {
        Self {
            inlet: Inlet::new(0),
        }
    }
}
impl<T> Default for SinkShape<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> sealed::Sealed for SourceShape<T> {}
impl<I, O> sealed::Sealed for FlowShape<I, O> {}
impl<T> sealed::Sealed for SinkShape<T> {}

impl<T: Send + 'static> Shape for SourceShape<T> {
    const INLETS: u16 = 0;
    const OUTLETS: u16 = 1;
    fn outlet_slot(_: u16) -> SlotKind {
        SlotKind::of::<T>()
    }
}
impl<I: Send + 'static, O: Send + 'static> Shape for FlowShape<I, O> {
    const INLETS: u16 = 1;
    const OUTLETS: u16 = 1;
    fn outlet_slot(_: u16) -> SlotKind {
        SlotKind::of::<O>()
    }
}
impl<T: Send + 'static> Shape for SinkShape<T> {
    const INLETS: u16 = 1;
    const OUTLETS: u16 = 0;
    fn outlet_slot(_: u16) -> SlotKind {
        unreachable!("a sink has no outlets")
    }
}

/// No open ports: a graph ready to run.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClosedShape;

/// `N` inlets of one type and one outlet: the shape of a fan-in junction
/// ([`Merge`](crate::graph::Merge), [`Concat`](crate::graph::Concat)).
#[derive(Debug)]
pub struct UniformFanInShape<T, const N: usize> {
    /// Where elements arrive, in port order.
    pub ins: [Inlet<T>; N],
    /// Where elements leave.
    pub out: Outlet<T>,
}

/// Two inlets of their own types and one outlet: the shape of
/// [`Zip`](crate::graph::Zip) and [`ZipWith`](crate::graph::ZipWith).
#[derive(Debug)]
pub struct FanInShape2<A, B, O> {
    /// The first input.
    pub in0: Inlet<A>,
    /// The second input.
    pub in1: Inlet<B>,
    /// Where elements leave.
    pub out: Outlet<O>,
}

/// One inlet and `N` outlets of one type: the shape of a fan-out junction
/// ([`Broadcast`](crate::graph::Broadcast), [`Balance`](crate::graph::Balance)).
#[derive(Debug)]
pub struct UniformFanOutShape<T, const N: usize> {
    /// Where elements arrive.
    pub inlet: Inlet<T>,
    /// Where elements leave, in port order.
    pub outs: [Outlet<T>; N],
}

/// One inlet and two outlets of their own types: the shape of
/// [`Unzip`](crate::graph::Unzip).
#[derive(Debug)]
pub struct FanOutShape2<I, A, B> {
    /// Where elements arrive.
    pub inlet: Inlet<I>,
    /// The first output.
    pub out0: Outlet<A>,
    /// The second output.
    pub out1: Outlet<B>,
}

/// Two directions, each with an inlet and an outlet: `in1 -> out1` and
/// `in2 -> out2` (a protocol layer: encode one way, decode the other).
#[derive(Debug)]
pub struct BidiShape<I1, O1, I2, O2> {
    /// The first direction's input.
    pub in1: Inlet<I1>,
    /// The first direction's output.
    pub out1: Outlet<O1>,
    /// The second direction's input.
    pub in2: Inlet<I2>,
    /// The second direction's output.
    pub out2: Outlet<O2>,
}

impl<T, const N: usize> UniformFanInShape<T, N> {
    /// Inlets `0..N`, outlet 0.
    pub fn new() -> Self {
        Self {
            ins: std::array::from_fn(|i| Inlet::new(port_number(i))),
            out: Outlet::new(0),
        }
    }
}
impl<T, const N: usize> Default for UniformFanInShape<T, N> {
    fn default() -> Self {
        Self::new()
    }
}
impl<A, B, O> FanInShape2<A, B, O> {
    /// Inlets 0 and 1, outlet 0.
    pub const fn new() -> Self {
        Self {
            in0: Inlet::new(0),
            in1: Inlet::new(1),
            out: Outlet::new(0),
        }
    }
}
impl<A, B, O> Default for FanInShape2<A, B, O> {
    fn default() -> Self {
        Self::new()
    }
}
impl<T, const N: usize> UniformFanOutShape<T, N> {
    /// Inlet 0, outlets `0..N`.
    pub fn new() -> Self {
        Self {
            inlet: Inlet::new(0),
            outs: std::array::from_fn(|i| Outlet::new(port_number(i))),
        }
    }
}
impl<T, const N: usize> Default for UniformFanOutShape<T, N> {
    fn default() -> Self {
        Self::new()
    }
}
impl<I, A, B> FanOutShape2<I, A, B> {
    /// Inlet 0, outlets 0 and 1.
    pub const fn new() -> Self {
        Self {
            inlet: Inlet::new(0),
            out0: Outlet::new(0),
            out1: Outlet::new(1),
        }
    }
}
impl<I, A, B> Default for FanOutShape2<I, A, B> {
    fn default() -> Self {
        Self::new()
    }
}
impl<I1, O1, I2, O2> BidiShape<I1, O1, I2, O2> {
    /// Inlets 0 (`in1`) and 1 (`in2`), outlets 0 (`out1`) and 1 (`out2`).
    pub const fn new() -> Self {
        Self {
            in1: Inlet::new(0),
            out1: Outlet::new(0),
            in2: Inlet::new(1),
            out2: Outlet::new(1),
        }
    }
}
impl<I1, O1, I2, O2> Default for BidiShape<I1, O1, I2, O2> {
    fn default() -> Self {
        Self::new()
    }
}

/// A port number; shapes have at most `u16::MAX` ports (checked at
/// compile time by [`port_count`]).
fn port_number(index: usize) -> u16 {
    u16::try_from(index).unwrap_or(u16::MAX)
}

/// `n` as a port count, or a compile-time error when a shape is too wide.
const fn port_count(n: usize) -> u16 {
    assert!(
        n <= u16::MAX as usize,
        "a shape has at most 65535 ports of a kind"
    );
    n as u16
}

impl sealed::Sealed for ClosedShape {}
impl<T, const N: usize> sealed::Sealed for UniformFanInShape<T, N> {}
impl<A, B, O> sealed::Sealed for FanInShape2<A, B, O> {}
impl<T, const N: usize> sealed::Sealed for UniformFanOutShape<T, N> {}
impl<I, A, B> sealed::Sealed for FanOutShape2<I, A, B> {}
impl<I1, O1, I2, O2> sealed::Sealed for BidiShape<I1, O1, I2, O2> {}

impl Shape for ClosedShape {
    const INLETS: u16 = 0;
    const OUTLETS: u16 = 0;
    fn outlet_slot(_: u16) -> SlotKind {
        unreachable!("a closed shape has no outlets")
    }
}
impl<T: Send + 'static, const N: usize> Shape for UniformFanInShape<T, N> {
    const INLETS: u16 = port_count(N);
    const OUTLETS: u16 = 1;
    fn outlet_slot(_: u16) -> SlotKind {
        SlotKind::of::<T>()
    }
}
impl<A: Send + 'static, B: Send + 'static, O: Send + 'static> Shape for FanInShape2<A, B, O> {
    const INLETS: u16 = 2;
    const OUTLETS: u16 = 1;
    fn outlet_slot(_: u16) -> SlotKind {
        SlotKind::of::<O>()
    }
}
impl<T: Send + 'static, const N: usize> Shape for UniformFanOutShape<T, N> {
    const INLETS: u16 = 1;
    const OUTLETS: u16 = port_count(N);
    fn outlet_slot(_: u16) -> SlotKind {
        SlotKind::of::<T>()
    }
}
impl<I: Send + 'static, A: Send + 'static, B: Send + 'static> Shape for FanOutShape2<I, A, B> {
    const INLETS: u16 = 1;
    const OUTLETS: u16 = 2;
    fn outlet_slot(index: u16) -> SlotKind {
        if index == 0 {
            SlotKind::of::<A>()
        } else {
            SlotKind::of::<B>()
        }
    }
}
impl<I1, O1, I2, O2> Shape for BidiShape<I1, O1, I2, O2>
where
    I1: Send + 'static,
    O1: Send + 'static,
    I2: Send + 'static,
    O2: Send + 'static,
{
    const INLETS: u16 = 2;
    const OUTLETS: u16 = 2;
    fn outlet_slot(index: u16) -> SlotKind {
        if index == 0 {
            SlotKind::of::<O1>()
        } else {
            SlotKind::of::<O2>()
        }
    }
}

/// `N` inlets of one type and an outlet of another: the shape of
/// [`ZipN`](crate::graph::ZipN) and [`ZipWithN`](crate::graph::ZipWithN).
#[derive(Debug)]
pub struct FanInShapeN<T, O, const N: usize> {
    /// Where elements arrive, in port order.
    pub ins: [Inlet<T>; N],
    /// Where elements leave.
    pub out: Outlet<O>,
}

impl<T, O, const N: usize> FanInShapeN<T, O, N> {
    /// Inlets `0..N`, outlet 0.
    pub fn new() -> Self {
        Self {
            ins: std::array::from_fn(|i| Inlet::new(port_number(i))),
            out: Outlet::new(0),
        }
    }
}
impl<T, O, const N: usize> Default for FanInShapeN<T, O, N> {
    fn default() -> Self {
        Self::new()
    }
}
impl<T, O, const N: usize> sealed::Sealed for FanInShapeN<T, O, N> {}
impl<T: Send + 'static, O: Send + 'static, const N: usize> Shape for FanInShapeN<T, O, N> {
    const INLETS: u16 = port_count(N);
    const OUTLETS: u16 = 1;
    fn outlet_slot(_: u16) -> SlotKind {
        SlotKind::of::<O>()
    }
}
