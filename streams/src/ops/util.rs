//! Building blocks for the operator stages.

use std::marker::PhantomData;

use crate::blueprint::Flow;
use crate::stage::{Attributes, FlowShape, GraphStage, GraphStageLogic, MatContext};

/// A flow stage whose logic `make` builds afresh for each run, from the
/// stage's attributes.
pub(crate) struct LogicFlow<I, O, M> {
    name: &'static str,
    make: M,
    _types: PhantomData<fn(I) -> O>,
}

impl<I, O, L, M> GraphStage for LogicFlow<I, O, M>
where
    I: Send + 'static,
    O: Send + 'static,
    L: GraphStageLogic,
    M: Fn(&Attributes) -> L + Send + Sync + 'static,
{
    type Shape = FlowShape<I, O>;
    type Mat = ();

    fn name(&self) -> &'static str {
        self.name
    }

    fn create_logic(&self, ctx: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        (Box::new((self.make)(ctx.attributes())), ())
    }
}

impl<I, O, M> LogicFlow<I, O, M> {
    /// The stage on its own (for a node that is more than a stage).
    pub(crate) fn new(name: &'static str, make: M) -> Self {
        Self {
            name,
            make,
            _types: PhantomData,
        }
    }
}

/// A flow of one stage with logic `make()`.
pub(crate) fn logic_flow<I, O, L, M>(name: &'static str, make: M) -> Flow<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
    L: GraphStageLogic,
    M: Fn() -> L + Send + Sync + 'static,
{
    logic_flow_with(name, move |_: &Attributes| make())
}

/// A flow of one stage with logic `make(attributes)`: for operators that
/// read an attribute (a supervision strategy, log levels) when they start.
pub(crate) fn logic_flow_with<I, O, L, M>(name: &'static str, make: M) -> Flow<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
    L: GraphStageLogic,
    M: Fn(&Attributes) -> L + Send + Sync + 'static,
{
    Flow::from_graph(LogicFlow::new(name, make))
}

/// The ports of every one-in, one-out operator.
pub(crate) const fn ports<I, O>() -> FlowShape<I, O> {
    FlowShape::new()
}

/// `ArgumentError::Zero` for a zero `n`.
pub(crate) fn at_least_one(
    n: usize,
    argument: &'static str,
) -> Result<(), crate::error::ArgumentError> {
    if n == 0 {
        Err(crate::error::ArgumentError::Zero { argument })
    } else {
        Ok(())
    }
}
