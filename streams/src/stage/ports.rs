//! Typed ports and the shapes made of them.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;

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

/// A typed slot for one connection: allocated once when the stream is
/// materialized, then every element of that connection moves through it.
pub(crate) type Slot = Box<dyn Any + Send>;

/// How to make and empty the slot of one connection (the element type is
/// erased in the island; these two functions know it).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct SlotKind {
    pub(crate) element: std::any::TypeId,
    pub(crate) new: fn() -> Slot,
    pub(crate) clear: fn(&mut Slot),
}

impl fmt::Debug for SlotKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SlotKind")
    }
}

impl SlotKind {
    pub(crate) fn of<T: Send + 'static>() -> Self {
        Self {
            element: std::any::TypeId::of::<T>(),
            new: || Box::new(None::<T>),
            clear: |slot| {
                if let Some(slot) = slot.downcast_mut::<Option<T>>() {
                    *slot = None;
                }
            },
        }
    }
}

/// The ports of a stage. Weir's blueprints are linear for now, so the
/// shapes are the three linear ones.
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
