//! The shared core of every blueprint: a linear list of nodes and a
//! function that picks the materialized value out of the values the
//! nodes produced.

use std::any::Any;
use std::sync::Arc;

use crate::interpreter::Node;

/// The materialized values of a run, one per stage in node order; each
/// blueprint's function takes the values of its own stages.
pub(crate) type MatValues<'a> = &'a mut [Option<Box<dyn Any + Send>>];

pub(crate) type MatFn<M> = Arc<dyn Fn(MatValues<'_>) -> M + Send + Sync>;

pub(crate) struct Linear<M> {
    pub(crate) nodes: Vec<Node>,
    /// How many values the nodes materialize.
    pub(crate) values: usize,
    pub(crate) mat: MatFn<M>,
}

impl<M> Clone for Linear<M> {
    fn clone(&self) -> Self {
        Self {
            nodes: self.nodes.clone(),
            values: self.values,
            mat: Arc::clone(&self.mat),
        }
    }
}

/// Take value `index` as an `M`.
pub(crate) fn take_value<M: 'static>(values: MatValues<'_>, index: usize) -> M {
    *values[index]
        .take()
        .expect("each materialized value is taken once")
        .downcast::<M>()
        .expect("the materialized value has its stage's type")
}

impl<M: 'static> Linear<M> {
    /// One node producing `values` values, the first of which is the `M`.
    pub(crate) fn single(node: Node, values: usize) -> Self {
        Self {
            nodes: vec![node],
            values,
            mat: Arc::new(|v| take_value::<M>(v, 0)),
        }
    }

    /// `self` then `next`, with the values combined by `combine`.
    pub(crate) fn then<M2: 'static, M3>(
        self,
        next: Linear<M2>,
        combine: impl Fn(M, M2) -> M3 + Send + Sync + 'static,
    ) -> Linear<M3> {
        let split = self.values;
        let (left, right) = (self.mat, next.mat);
        let mut nodes = self.nodes;
        nodes.extend(next.nodes);
        Linear {
            nodes,
            values: split + next.values,
            mat: Arc::new(move |v| {
                let (l, r) = v.split_at_mut(split);
                combine(left(l), right(r))
            }),
        }
    }

    pub(crate) fn map_mat<M2>(self, f: impl Fn(M) -> M2 + Send + Sync + 'static) -> Linear<M2> {
        let mat = self.mat;
        Linear {
            nodes: self.nodes,
            values: self.values,
            mat: Arc::new(move |v| f(mat(v))),
        }
    }

    /// Apply `f` to the attributes of the last node.
    pub(crate) fn with_last_attributes(
        mut self,
        f: impl FnOnce(crate::Attributes) -> crate::Attributes,
    ) -> Self {
        if let Some(Node::Stage { attributes, .. }) = self.nodes.last_mut() {
            *attributes = f(std::mem::take(attributes));
        }
        self
    }
}
