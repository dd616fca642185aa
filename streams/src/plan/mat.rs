//! [`MatFn`]: a blueprint's materialized-value function, kept as data.
//!
//! Every composition (`via`, `to`, a fluent junction, `map_materialized_value`)
//! makes a new function from the functions of its parts. Held as nested
//! closures, a chain of thousands of compositions (`Source::combine` over
//! thousands of sources, a fold of `concat`s) would nest a call per
//! composition when the stream is materialized, and a drop per composition
//! when the blueprint is dropped: either overflows a thread's stack. So
//! past a few dozen levels ([`NEST_LIMIT`]) the compositions are an
//! expression tree ([`MatExpr`]) that is evaluated and dropped with an
//! explicit stack, its leaves the shallow closures.

use std::any::Any;
use std::ops::Deref;
use std::sync::Arc;

use super::graph::MatValues;

/// A function over the values of a graph's nodes.
type LeafFn = Arc<dyn Fn(MatValues<'_>) -> Box<dyn Any> + Send + Sync>;
/// A function of one value.
type MapFn = Arc<dyn Fn(Box<dyn Any>) -> Box<dyn Any> + Send + Sync>;
/// A function of two values.
type PairFn = Arc<dyn Fn(Box<dyn Any>, Box<dyn Any>) -> Box<dyn Any> + Send + Sync>;

/// What one node of a [`MatExpr`] does with its children's values.
enum Op {
    /// A function of the graph's node values (no children).
    Leaf(LeafFn),
    /// A function of its one child's value (over the same node values).
    Map(MapFn),
    /// Its first child over the node values before `split`, its second
    /// over the rest, combined.
    Pair { split: usize, combine: PairFn },
}

/// A materialized-value function as a tree of compositions.
pub(crate) struct MatExpr {
    op: Op,
    children: Vec<Arc<MatExpr>>,
}

/// A step of [`MatExpr::eval`].
enum Task<'e> {
    /// Evaluate this expression over `values[base..base + len]`.
    Eval(&'e MatExpr, usize, usize),
    /// Its children's values are on the results stack: apply its op.
    Apply(&'e MatExpr),
}

impl MatExpr {
    /// The value of this expression over `values`, evaluated left to
    /// right (as nested calls would) with no recursion.
    fn eval(&self, values: MatValues<'_>) -> Box<dyn Any> {
        let mut tasks = vec![Task::Eval(self, 0, values.len())];
        let mut results: Vec<Box<dyn Any>> = Vec::new();
        while let Some(task) = tasks.pop() {
            match task {
                Task::Eval(expr, base, len) => match &expr.op {
                    Op::Leaf(f) => results.push(f(&mut values[base..base + len])),
                    Op::Map(_) => {
                        tasks.push(Task::Apply(expr));
                        tasks.push(Task::Eval(&expr.children[0], base, len));
                    }
                    Op::Pair { split, .. } => {
                        tasks.push(Task::Apply(expr));
                        tasks.push(Task::Eval(&expr.children[1], base + split, len - split));
                        tasks.push(Task::Eval(&expr.children[0], base, *split));
                    }
                },
                Task::Apply(expr) => {
                    let value = match &expr.op {
                        Op::Leaf(_) => unreachable!("a leaf is applied when evaluated"),
                        Op::Map(f) => f(results.pop().expect("the child's value")),
                        Op::Pair { combine, .. } => {
                            let right = results.pop().expect("the right child's value");
                            let left = results.pop().expect("the left child's value");
                            combine(left, right)
                        }
                    };
                    results.push(value);
                }
            }
        }
        results.pop().expect("the expression's value")
    }
}

impl Drop for MatExpr {
    fn drop(&mut self) {
        // Children this expression alone holds are dropped here, one at a
        // time, each emptied of its own children first.
        let mut orphans = std::mem::take(&mut self.children);
        while let Some(child) = orphans.pop() {
            if let Some(mut child) = Arc::into_inner(child) {
                orphans.append(&mut child.children);
            }
        }
    }
}

/// How many compositions deep a [`MatFn`] nests plain closures before it
/// becomes a [`MatExpr`]: shallow functions (almost all) are typed
/// closures calling each other, with no boxing and no evaluation stack
/// (materializing a small graph allocates nothing more for its value);
/// deeper ones are expression nodes whose leaves nest at most this many
/// calls. A few dozen frames are nothing next to a thread's stack.
const NEST_LIMIT: usize = 32;

/// A blueprint's materialized-value function: callable as a
/// `Fn(MatValues) -> M` (through `Deref`), composable to any depth
/// without nesting more than [`NEST_LIMIT`] calls or drops.
pub(crate) struct MatFn<M> {
    call: Call<M>,
    /// How many closures deep `call` nests; [`NEST_LIMIT`] once it
    /// evaluates `tree` (so compositions of it are expressions too).
    depth: usize,
    /// The expression `call` evaluates, past the limit.
    tree: Option<Arc<MatExpr>>,
}

/// The function itself: a plain function pointer where nothing is
/// captured (a single node's value, the empty graph's `()`), so such
/// blueprints allocate nothing for it; a shared closure otherwise.
enum Call<M> {
    Plain(fn(MatValues<'_>) -> M),
    Shared(Arc<dyn Fn(MatValues<'_>) -> M + Send + Sync>),
}

impl<M> Clone for Call<M> {
    fn clone(&self) -> Self {
        match self {
            Self::Plain(f) => Self::Plain(*f),
            Self::Shared(f) => Self::Shared(Arc::clone(f)),
        }
    }
}

impl<M> Call<M> {
    fn call(&self, values: MatValues<'_>) -> M {
        match self {
            Self::Plain(f) => f(values),
            Self::Shared(f) => f(values),
        }
    }
}

impl<M> Clone for MatFn<M> {
    fn clone(&self) -> Self {
        Self {
            call: self.call.clone(),
            depth: self.depth,
            tree: self.tree.clone(),
        }
    }
}

impl<M: 'static> Deref for MatFn<M> {
    type Target = dyn Fn(MatValues<'_>) -> M + Send + Sync;

    fn deref(&self) -> &Self::Target {
        match &self.call {
            Call::Plain(f) => f,
            Call::Shared(f) => &**f,
        }
    }
}

impl<M: 'static> MatFn<M> {
    /// The function evaluating `expr`.
    fn of(expr: MatExpr) -> Self {
        let tree = Arc::new(expr);
        let eval = Arc::clone(&tree);
        Self {
            call: Call::Shared(Arc::new(move |values| {
                *eval
                    .eval(values)
                    .downcast::<M>()
                    .expect("a materialized-value function makes its type")
            })),
            depth: NEST_LIMIT,
            tree: Some(tree),
        }
    }

    /// This function as an expression node.
    fn expr(&self) -> Arc<MatExpr> {
        if let Some(tree) = &self.tree {
            return Arc::clone(tree);
        }
        let call = self.call.clone();
        Arc::new(MatExpr {
            op: Op::Leaf(Arc::new(move |values| Box::new(call.call(values)))),
            children: Vec::new(),
        })
    }

    /// `f` over the graph's node values.
    pub(crate) fn new(f: impl Fn(MatValues<'_>) -> M + Send + Sync + 'static) -> Self {
        Self {
            call: Call::Shared(Arc::new(f)),
            depth: 1,
            tree: None,
        }
    }

    /// `f` over the graph's node values, where `f` captures nothing.
    pub(crate) fn plain(f: fn(MatValues<'_>) -> M) -> Self {
        Self {
            call: Call::Plain(f),
            depth: 1,
            tree: None,
        }
    }

    /// `f` of this function's value.
    pub(crate) fn map<M2: 'static>(
        &self,
        f: impl Fn(M) -> M2 + Send + Sync + 'static,
    ) -> MatFn<M2> {
        if self.depth < NEST_LIMIT {
            let inner = self.call.clone();
            return MatFn {
                call: Call::Shared(Arc::new(move |values| f(inner.call(values)))),
                depth: self.depth + 1,
                tree: None,
            };
        }
        MatFn::of(MatExpr {
            op: Op::Map(Arc::new(move |value| {
                let value = *value.downcast::<M>().expect("typed by its MatFn");
                Box::new(f(value))
            })),
            children: vec![self.expr()],
        })
    }

    /// This function over the first `split` node values and `right` over
    /// the rest, combined by `combine`.
    pub(crate) fn pair<M2: 'static, M3: 'static>(
        &self,
        split: usize,
        right: &MatFn<M2>,
        combine: impl Fn(M, M2) -> M3 + Send + Sync + 'static,
    ) -> MatFn<M3> {
        let depth = self.depth.max(right.depth);
        if depth < NEST_LIMIT {
            let (left, right) = (self.call.clone(), right.call.clone());
            return MatFn {
                call: Call::Shared(Arc::new(move |values| {
                    let (l, r) = values.split_at_mut(split);
                    combine(left.call(l), right.call(r))
                })),
                depth: depth + 1,
                tree: None,
            };
        }
        MatFn::of(MatExpr {
            op: Op::Pair {
                split,
                combine: Arc::new(move |left, right| {
                    let left = *left.downcast::<M>().expect("typed by its MatFn");
                    let right = *right.downcast::<M2>().expect("typed by its MatFn");
                    Box::new(combine(left, right))
                }),
            },
            children: vec![self.expr(), right.expr()],
        })
    }
}

#[cfg(test)]
mod tests {
    use std::any::Any;

    use super::{MatFn, NEST_LIMIT};

    /// A function over one node's value, a `u32`, as a one-element list.
    fn leaf() -> MatFn<Vec<u32>> {
        MatFn::new(|values| {
            let value = values[0].take().expect("one value").downcast::<u32>();
            vec![*value.expect("a u32")]
        })
    }

    /// Compositions far past the nesting limit (closures below it,
    /// expression nodes above) see each part's own values, left to right.
    #[test]
    fn deep_compositions_keep_order_and_slices() {
        let n = NEST_LIMIT * 5;
        let mut f = leaf();
        for i in 1..n {
            f = f
                .pair(i, &leaf(), |mut all, next| {
                    all.extend(next);
                    all
                })
                .map(|all| all);
        }
        let mut values: Vec<Option<Box<dyn Any + Send>>> = (0..n as u32)
            .map(|i| Some(Box::new(i) as Box<dyn Any + Send>))
            .collect();
        assert_eq!(f(&mut values), (0..n as u32).collect::<Vec<_>>());
    }
}
