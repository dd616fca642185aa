//! **Fan-in of fused iterators.** Applies (with fusion on) to a fan-in
//! junction that offers a fused form (`Merge`, `MergePreferred`, `Concat`,
//! `Interleave`, `OrElse`, and every zip: `Zip`, `ZipWith`, `ZipN`,
//! `ZipWithN`, `ZipWith3` .. `ZipWith5`) when every one of its inputs is an
//! iterator (or poll-function) source followed only by simple operators:
//! no async boundary and no other stage on the way, however the graph was
//! built (fluent `merge`/`zip`/`concat` or a `GraphBuilder`). The junction
//! and its input chains become one iterator source node (the junction
//! over its inputs' fused iterators, see `crate::fusion::fan_in`), so the
//! chain rules then apply to it as to any iterator source: operators
//! after it fuse into it, and a folding sink after it drives it in one
//! loop. The rule runs to a fixed point, so a junction fed by fused
//! junctions fuses too.
//!
//! The fused node keeps the junction's node index (its materialized value
//! is `()`, as the junction's); the absorbed nodes produce `()` too.
//!
//! A junction fed straight (no operator between) by a fused junction it
//! can splice ([`FanInNode::splices`]: a concat of a concat, a merge of a
//! merge) takes the inner one's inputs as its own, so a chain of any
//! length (`Source::combine` over thousands of sources, a fold of
//! `concat`s) is one wide fused junction, and neither starting it nor
//! pulling an element nests a call per junction.

use std::collections::HashMap;
use std::sync::Arc;

use super::rules::adapted;
use crate::fusion::{FanInNode, IterNode, StepNode};
use crate::plan::graph::{Edge, Fuses, Kind, Node, PortRef};
use crate::stage::Attributes;

/// A graph after the rule, with the nodes it absorbed marked.
pub(super) struct Rewritten {
    pub(super) nodes: Vec<Node>,
    pub(super) edges: Vec<Edge>,
    pub(super) absorbed: Vec<bool>,
    /// A junction fused in this pass and not yet made: its fan-in and its
    /// fused inputs (taken by a junction after it that splices it).
    spliceable: Vec<Option<Spliceable>>,
    /// The node feeding each connected inlet (edges as given: an edge
    /// that touches a node the rule absorbed is found and then refused).
    feeds: HashMap<PortRef, usize>,
    /// The junctions this rule fused (their inlets' edges go at the end).
    fused: Vec<bool>,
}

/// A fused junction as an outer one may splice it.
struct Spliceable {
    fan_in: Arc<dyn FanInNode>,
    inputs: Vec<Arc<dyn IterNode>>,
}

/// The longest name a fused node gets by joining the names of the nodes
/// it absorbed; past it, the junction's name and a count (a chain of
/// thousands of junctions would otherwise make names of millions of
/// characters).
const NAME_LIMIT: usize = 200;

/// The graph with every fusable fan-in junction fused, or `None` when
/// there is none.
pub(super) fn rewrite(nodes: &[Node], edges: &[Edge]) -> Option<Rewritten> {
    if !nodes
        .iter()
        .any(|n| matches!(n.fuses, Some(Fuses::FanIn(_))))
    {
        return None;
    }
    let mut graph = Rewritten {
        nodes: nodes.to_vec(),
        edges: edges.to_vec(),
        absorbed: vec![false; nodes.len()],
        spliceable: (0..nodes.len()).map(|_| None).collect(),
        feeds: edges.iter().map(|e| (e.to, e.from.0 as usize)).collect(),
        fused: vec![false; nodes.len()],
    };
    let mut changed = false;
    // Sweep until a sweep fuses nothing: a junction fed by one fused in
    // the same sweep (a later node) fuses in that sweep too, so a chain
    // built from the inside out takes one sweep.
    loop {
        let mut progressed = false;
        for j in 0..graph.nodes.len() {
            if let Some(inputs) = fusable(&graph, j) {
                fuse(&mut graph, j, inputs);
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
        changed = true;
    }
    if !changed {
        return None;
    }
    for j in 0..graph.nodes.len() {
        if graph.spliceable[j].is_some() {
            make(&mut graph, j);
        }
    }
    let (absorbed, fused) = (&graph.absorbed, &graph.fused);
    graph.edges.retain(|e| {
        !fused[e.to.0 as usize] && !absorbed[e.from.0 as usize] && !absorbed[e.to.0 as usize]
    });
    Some(graph)
}

/// One input of a junction: its source node and its operators, in order.
struct Input {
    source: usize,
    /// `None` for a junction fused in this pass and not yet made (see
    /// [`Spliceable`]).
    iter: Option<Arc<dyn IterNode>>,
    steps: Vec<(usize, Arc<dyn StepNode>)>,
}

/// The inputs of junction `j`, if it has a fused form and every input is
/// a fused iterator chain.
fn fusable(graph: &Rewritten, j: usize) -> Option<Vec<Input>> {
    let node = &graph.nodes[j];
    if graph.absorbed[j]
        || graph.fused[j]
        || !matches!(node.fuses, Some(Fuses::FanIn(_)))
        || !matches!(node.kind, Kind::Stage(_))
    {
        return None;
    }
    let (ins, _) = node.kind.ports();
    (0..ins).map(|p| input(graph, j, p)).collect()
}

/// The chain feeding inlet `port` of node `j`, if it is an iterator
/// source (or a fused junction) and simple operators.
fn input(graph: &Rewritten, j: usize, port: u16) -> Option<Input> {
    let into = |node: usize, port: u16| {
        let to = (u32::try_from(node).ok()?, port);
        graph.feeds.get(&to).copied()
    };
    let mut steps = Vec::new();
    let mut at = into(j, port)?;
    // A chain is at most every node long (a cycle of operators has no source).
    for _ in 0..graph.nodes.len() {
        if at == j || graph.absorbed[at] {
            return None;
        }
        let iter = match &graph.nodes[at].kind {
            Kind::Step(step) => {
                steps.push((at, Arc::clone(step)));
                at = into(at, 0)?;
                continue;
            }
            Kind::Iter(iter) => Some(Arc::clone(iter)),
            _ if graph.spliceable[at].is_some() => None,
            _ => return None,
        };
        steps.reverse();
        return Some(Input {
            source: at,
            iter,
            steps,
        });
    }
    None
}

/// Fuse junction `j` over `inputs`: mark what it absorbs and keep it as
/// [`Spliceable`], made by [`make`] once no junction after it splices it.
fn fuse(graph: &mut Rewritten, j: usize, inputs: Vec<Input>) {
    let Some(Fuses::FanIn(fan_in)) = &graph.nodes[j].fuses else {
        unreachable!("a fusable junction");
    };
    let fan_in = Arc::clone(fan_in);
    let mut attributes = Attributes::new();
    let mut names = Vec::new();
    let mut iters = Vec::new();
    for input in inputs {
        for node in std::iter::once(input.source).chain(input.steps.iter().map(|(i, _)| *i)) {
            graph.absorbed[node] = true;
            attributes = attributes.and(&graph.nodes[node].attributes);
            names.push(graph.nodes[node].name().into_owned());
        }
        let inner = graph.spliceable[input.source]
            .take_if(|inner| input.steps.is_empty() && fan_in.splices(&*inner.fan_in));
        if let Some(inner) = inner {
            iters.extend(inner.inputs);
            continue;
        }
        let iter = match input.iter {
            Some(iter) => iter,
            None => make(graph, input.source),
        };
        let steps: Vec<&Arc<dyn StepNode>> = input.steps.iter().map(|(_, s)| s).collect();
        iters.push(adapted(&iter, &steps));
    }
    let junction = &graph.nodes[j];
    let joined = names.iter().map(String::len).sum::<usize>() + names.len();
    let name = if joined <= NAME_LIMIT {
        names.push(junction.name().into_owned());
        names.join(".")
    } else {
        format!("{}-of-{}-fused", junction.name(), names.len())
    };
    graph.nodes[j].attributes = attributes.and(&junction.attributes).with_name(name);
    graph.spliceable[j] = Some(Spliceable {
        fan_in,
        inputs: iters,
    });
    graph.fused[j] = true;
}

/// Make the fused junction `j` kept as [`Spliceable`]: its node becomes
/// the fused iterator source. Making it only once nothing splices it
/// keeps a chain of `n` junctions linear (each would otherwise make a
/// fused form over all the inputs gathered so far).
fn make(graph: &mut Rewritten, j: usize) -> Arc<dyn IterNode> {
    let Spliceable { fan_in, inputs } = graph.spliceable[j].take().expect("a fused junction");
    let fused = fan_in.fuse(&inputs);
    let attributes = std::mem::take(&mut graph.nodes[j].attributes);
    graph.nodes[j] = Node::new(Kind::Iter(Arc::clone(&fused)), attributes);
    fused
}

#[cfg(test)]
mod tests {
    use crate::blueprint::{Keep, RunnableGraph, Sink, Source};
    use crate::graph::{GraphBuilder, JunctionOps, Merge};
    use crate::ops::{FlowOps, SubstreamOps};

    /// Stages planned for `graph` with fusion on and off.
    fn stages<M>(graph: &RunnableGraph<M>) -> [usize; 2] {
        [true, false].map(|fusion| {
            let plan = super::super::plan(&graph.graph.nodes, &graph.graph.edges, fusion);
            plan.islands.iter().map(|i| i.stages.len()).sum()
        })
    }

    fn fold<T: Send + 'static>() -> Sink<T, crate::completion::Completion<u64>> {
        Sink::fold(0u64, |a, _| a + 1)
    }

    #[test]
    fn fused_inputs_make_one_loop_into_a_fold() {
        let merge = Source::range(0u64..10)
            .map(|x| x + 1)
            .merge(Source::range(0u64..10).filter(|x| x % 2 == 0));
        assert_eq!(stages(&merge.to_mat(fold(), Keep::right)), [1, 6]);
        let zip = Source::range(0u64..10)
            .zip(Source::range(0u64..10))
            .map(|(a, b)| a + b);
        assert_eq!(stages(&zip.to_mat(fold(), Keep::right)), [1, 5]);
        let nested = Source::range(0u64..3)
            .concat(Source::range(0u64..3))
            .interleave(Source::range(0u64..3), 2)
            .unwrap();
        assert_eq!(stages(&nested.to_mat(fold(), Keep::right)), [1, 6]);
    }

    #[test]
    fn or_else_and_every_zip_make_one_loop_into_a_fold() {
        let or_else = Source::range(0u64..10).or_else(Source::range(0u64..10).map(|x| x + 1));
        assert_eq!(stages(&or_else.to_mat(fold(), Keep::right)), [1, 5]);
        let zip_n = Source::zip_n([
            Source::range(0u64..10),
            Source::range(0u64..10),
            Source::range(0u64..10),
        ]);
        assert_eq!(stages(&zip_n.to_mat(fold(), Keep::right)), [1, 5]);
        let flow = crate::blueprint::Flow::<u64>::new()
            .map(|x| x * 2)
            .zip_with_n([Source::range(0u64..10)], |[a, b]| a + b);
        let flow_zip = Source::range(0u64..10).via(flow);
        assert_eq!(stages(&flow_zip.to_mat(fold(), Keep::right)), [1, 5]);
        let mut b = GraphBuilder::new();
        let zip = b.add(crate::graph::ZipWith3::new(|a: u64, b: u32, c: bool| {
            a + u64::from(b) + u64::from(c)
        }));
        let (x, y, z) = (
            b.source(Source::range(0u64..5)),
            b.source(Source::range(0u32..5)),
            b.source(Source::repeat(true)),
        );
        b.connect(x, zip.in0()).unwrap();
        b.connect(y, zip.in1()).unwrap();
        b.connect(z, zip.in2()).unwrap();
        let sink = b.sink(Sink::<u64, _>::ignore());
        b.connect(zip.out(), sink).unwrap();
        let graph = b.build(|_| ()).unwrap();
        assert_eq!(stages(&graph), [1, 5]);
    }

    #[test]
    fn a_junction_built_with_the_builder_fuses_too() {
        let mut b = GraphBuilder::new();
        let join = b.add(Merge::<u64, 3>::new());
        for inlet in join.ins() {
            let source = b.source(Source::range(0u64..5));
            b.connect(source, inlet).unwrap();
        }
        let sink = b.sink(Sink::<u64, _>::ignore());
        b.connect(join.out(), sink).unwrap();
        let graph = b.build(|_| ()).unwrap();
        assert_eq!(stages(&graph), [1, 5], "one loop into the (folding) sink");
    }

    #[test]
    fn an_input_that_does_not_fuse_keeps_the_junction() {
        let boundary = Source::range(0u64..10).merge(Source::range(0u64..10).async_boundary());
        // range, merge, fold on one island, the boundary's two halves and
        // range on the other.
        assert_eq!(stages(&boundary.to_mat(fold(), Keep::right))[0], 5);
        // `intersperse` is a stage of its own, not an operator that fuses.
        let interspersed = Source::range(0u64..10).zip(Source::range(0u64..10).intersperse(0));
        assert_eq!(stages(&interspersed.to_mat(fold(), Keep::right))[0], 5);
        // `scan` fuses into its source as an adapter (it emits its seed
        // first), so the zip's inputs are fused iterators and it fuses too.
        let scanned = Source::range(0u64..10).zip(Source::range(0u64..10).scan(0u64, |a, x| a + x));
        assert_eq!(stages(&scanned.to_mat(fold(), Keep::right))[0], 1);
    }

    #[test]
    fn flat_map_concat_runs_inside_a_folding_sink() {
        let flat = Source::range(0u64..10)
            .flat_map_concat(|x| Source::range(0..x))
            .map(|x| x + 1);
        assert_eq!(stages(&flat.to_mat(fold(), Keep::right)), [2, 4]);
        // Not followed by a folding sink: the flattening stage as it was.
        let bounded = Source::range(0u64..10)
            .flat_map_concat(|x| Source::range(0..x))
            .async_boundary();
        assert_eq!(stages(&bounded.to_mat(fold(), Keep::right)), [4, 5]);
    }
}
