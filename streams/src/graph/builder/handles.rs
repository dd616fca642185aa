//! The typed handles a [`GraphBuilder`](super::GraphBuilder) gives out:
//! ports ([`In`], [`Out`], a stage's [`StagePorts`]) and the keys to
//! materialized values ([`MatKey`], read through [`Mats`]).

use std::any::Any;
use std::marker::PhantomData;

use crate::plan::graph::PortRef;

/// A typed inlet of a node in a [`GraphBuilder`](super::GraphBuilder).
pub struct In<T> {
    pub(in crate::graph) builder: u64,
    pub(in crate::graph) port: PortRef,
    pub(super) _t: PhantomData<fn(T)>,
}

/// A typed outlet of a node in a [`GraphBuilder`](super::GraphBuilder).
pub struct Out<T> {
    pub(in crate::graph) builder: u64,
    pub(in crate::graph) port: PortRef,
    pub(super) _t: PhantomData<fn() -> T>,
}

/// How to reach the materialized value of a blueprint added to a
/// [`GraphBuilder`](super::GraphBuilder): pass it to [`Mats::take`] in the build function.
pub struct MatKey<M> {
    pub(super) builder: u64,
    /// The blueprint's place among the builder's imports.
    pub(super) index: usize,
    /// Its first node.
    pub(super) offset: usize,
    pub(super) _m: PhantomData<fn() -> M>,
}

/// The materialized values of one run of a built graph.
pub struct Mats<'a> {
    pub(super) builder: u64,
    /// One per added blueprint, in the order added; `None` once taken.
    pub(super) values: &'a mut [Option<Box<dyn Any>>],
}

/// The ports of a stage added with [`GraphBuilder::add`](super::GraphBuilder::add), typed by its shape.
pub struct StagePorts<S> {
    pub(super) builder: u64,
    pub(super) node: u32,
    pub(super) _shape: PhantomData<fn() -> S>,
}

impl<T> Clone for In<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for In<T> {}
impl<T> Clone for Out<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Out<T> {}
impl<M> Clone for MatKey<M> {
    fn clone(&self) -> Self {
        Self {
            builder: self.builder,
            index: self.index,
            offset: self.offset,
            _m: PhantomData,
        }
    }
}

impl Mats<'_> {
    /// The materialized value behind `key`.
    ///
    /// # Panics
    ///
    /// If `key` is of another builder, or its value was taken before in
    /// this run.
    pub fn take<M: 'static>(&mut self, key: &MatKey<M>) -> M {
        assert_eq!(
            key.builder, self.builder,
            "a MatKey of another GraphBuilder"
        );
        *self.values[key.index]
            .take()
            .expect("each materialized value is taken once per run")
            .downcast::<M>()
            .expect("a MatKey has its blueprint's value type")
    }
}

impl<S> StagePorts<S> {
    pub(super) fn in_at<T>(&self, port: usize) -> In<T> {
        In {
            builder: self.builder,
            port: (
                self.node,
                u16::try_from(port).expect("shapes have u16 ports"),
            ),
            _t: PhantomData,
        }
    }
    pub(super) fn out_at<T>(&self, port: usize) -> Out<T> {
        Out {
            builder: self.builder,
            port: (
                self.node,
                u16::try_from(port).expect("shapes have u16 ports"),
            ),
            _t: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for In<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "In<{}>({}:{})",
            std::any::type_name::<T>(),
            self.port.0,
            self.port.1
        )
    }
}

impl<T> std::fmt::Debug for Out<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Out<{}>({}:{})",
            std::any::type_name::<T>(),
            self.port.0,
            self.port.1
        )
    }
}

impl<M> std::fmt::Debug for MatKey<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatKey")
            .field("offset", &self.offset)
            .finish()
    }
}

impl std::fmt::Debug for Mats<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mats")
            .field("values", &self.values.len())
            .finish()
    }
}

impl<S> std::fmt::Debug for StagePorts<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagePorts")
            .field("node", &self.node)
            .finish()
    }
}
