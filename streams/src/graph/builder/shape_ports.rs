//! The typed ports of each shape's stage in a
//! [`GraphBuilder`](super::GraphBuilder): `inlet()`, `outs()`, `ins()` ..

use super::super::bidi::BidiPorts;
use super::{In, Out, StagePorts};
use crate::stage::{
    BidiShape, FanInShape2, FanInShapeN, FanOutShape2, FlowShape, SinkShape, SourceShape,
    UniformFanInShape, UniformFanOutShape,
};

impl<T> StagePorts<SourceShape<T>> {
    /// The outlet.
    pub fn out(&self) -> Out<T> {
        self.out_at(0)
    }
}
impl<I, O> StagePorts<FlowShape<I, O>> {
    /// The inlet.
    pub fn inlet(&self) -> In<I> {
        self.in_at(0)
    }
    /// The outlet.
    pub fn out(&self) -> Out<O> {
        self.out_at(0)
    }
}
impl<T> StagePorts<SinkShape<T>> {
    /// The inlet.
    pub fn inlet(&self) -> In<T> {
        self.in_at(0)
    }
}
impl<T, const N: usize> StagePorts<UniformFanInShape<T, N>> {
    /// The inlets, in port order.
    pub fn ins(&self) -> [In<T>; N] {
        std::array::from_fn(|i| self.in_at(i))
    }
    /// The outlet.
    pub fn out(&self) -> Out<T> {
        self.out_at(0)
    }
}
impl<A, B, O> StagePorts<FanInShape2<A, B, O>> {
    /// The first inlet.
    pub fn in0(&self) -> In<A> {
        self.in_at(0)
    }
    /// The second inlet.
    pub fn in1(&self) -> In<B> {
        self.in_at(1)
    }
    /// The outlet.
    pub fn out(&self) -> Out<O> {
        self.out_at(0)
    }
}
impl<T, O, const N: usize> StagePorts<FanInShapeN<T, O, N>> {
    /// The inlets, in port order.
    pub fn ins(&self) -> [In<T>; N] {
        std::array::from_fn(|i| self.in_at(i))
    }
    /// Inlet `i` (of `0..N`).
    pub(crate) fn inlet(&self, i: usize) -> In<T> {
        debug_assert!(i < N, "inlet {i} of {N}");
        self.in_at(i)
    }
    /// The outlet.
    pub fn out(&self) -> Out<O> {
        self.out_at(0)
    }
}
impl<I1, O1, I2, O2> StagePorts<BidiShape<I1, O1, I2, O2>> {
    /// The ports, as a [`BidiPorts`].
    pub fn bidi(&self) -> BidiPorts<I1, O1, I2, O2> {
        BidiPorts {
            in1: self.in_at(0),
            out1: self.out_at(0),
            in2: self.in_at(1),
            out2: self.out_at(1),
        }
    }
}
impl<T, const N: usize> StagePorts<UniformFanOutShape<T, N>> {
    /// The inlet.
    pub fn inlet(&self) -> In<T> {
        self.in_at(0)
    }
    /// The outlets, in port order.
    pub fn outs(&self) -> [Out<T>; N] {
        std::array::from_fn(|i| self.out_at(i))
    }
}
impl<I, A, B> StagePorts<FanOutShape2<I, A, B>> {
    /// The inlet.
    pub fn inlet(&self) -> In<I> {
        self.in_at(0)
    }
    /// The first outlet.
    pub fn out0(&self) -> Out<A> {
        self.out_at(0)
    }
    /// The second outlet.
    pub fn out1(&self) -> Out<B> {
        self.out_at(1)
    }
}
