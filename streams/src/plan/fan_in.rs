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

use std::sync::Arc;

use super::rules::adapted;
use crate::Attributes;
use crate::blueprint::graph::{Edge, Fuses, Kind, Node};
use crate::fusion::{IterNode, StepNode};

/// A graph after the rule, with the nodes it absorbed marked.
pub(super) struct Rewritten {
    pub(super) nodes: Vec<Node>,
    pub(super) edges: Vec<Edge>,
    pub(super) absorbed: Vec<bool>,
}

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
    };
    let mut changed = false;
    // Each pass fuses at least one junction or stops.
    while let Some(j) = (0..graph.nodes.len()).find(|&j| fusable(&graph, j).is_some()) {
        let inputs = fusable(&graph, j).expect("found fusable");
        fuse(&mut graph, j, inputs);
        changed = true;
    }
    changed.then_some(graph)
}

/// One input of a junction: its source node and its operators, in order.
struct Input {
    source: usize,
    iter: Arc<dyn IterNode>,
    steps: Vec<(usize, Arc<dyn StepNode>)>,
}

/// The inputs of junction `j`, if it has a fused form and every input is
/// a fused iterator chain.
fn fusable(graph: &Rewritten, j: usize) -> Option<Vec<Input>> {
    let node = &graph.nodes[j];
    if graph.absorbed[j]
        || !matches!(node.fuses, Some(Fuses::FanIn(_)))
        || !matches!(node.kind, Kind::Stage(_))
    {
        return None;
    }
    let (ins, _) = node.kind.ports();
    (0..ins).map(|p| input(graph, j, p)).collect()
}

/// The chain feeding inlet `port` of node `j`, if it is an iterator
/// source and simple operators.
fn input(graph: &Rewritten, j: usize, port: u16) -> Option<Input> {
    let into = |node: usize, port: u16| {
        let to = (u32::try_from(node).ok()?, port);
        graph
            .edges
            .iter()
            .find(|e| e.to == to)
            .map(|e| e.from.0 as usize)
    };
    let mut steps = Vec::new();
    let mut at = into(j, port)?;
    // A chain is at most every node long (a cycle of operators has no source).
    for _ in 0..graph.nodes.len() {
        if at == j || graph.absorbed[at] {
            return None;
        }
        match &graph.nodes[at].kind {
            Kind::Step(step) => {
                steps.push((at, Arc::clone(step)));
                at = into(at, 0)?;
            }
            Kind::Iter(iter) => {
                steps.reverse();
                return Some(Input {
                    source: at,
                    iter: Arc::clone(iter),
                    steps,
                });
            }
            _ => return None,
        }
    }
    None
}

/// Replace junction `j` by its fused form over `inputs`.
fn fuse(graph: &mut Rewritten, j: usize, inputs: Vec<Input>) {
    let mut attributes = Attributes::new();
    let mut names = Vec::new();
    let mut iters = Vec::new();
    for input in &inputs {
        for node in std::iter::once(input.source).chain(input.steps.iter().map(|(i, _)| *i)) {
            graph.absorbed[node] = true;
            attributes = attributes.and(&graph.nodes[node].attributes);
            names.push(graph.nodes[node].name());
        }
        let steps: Vec<&Arc<dyn StepNode>> = input.steps.iter().map(|(_, s)| s).collect();
        iters.push(adapted(&input.iter, &steps));
    }
    let junction = &graph.nodes[j];
    names.push(junction.name());
    let Some(Fuses::FanIn(fan_in)) = &junction.fuses else {
        unreachable!("a fusable junction");
    };
    let fused = fan_in.fuse(&iters);
    let attributes = attributes
        .and(&junction.attributes)
        .with_name(names.join("."));
    graph.nodes[j] = Node::new(Kind::Iter(fused), attributes);
    let absorbed = &graph.absorbed;
    let to_junction = u32::try_from(j).expect("fewer than 2^32 nodes");
    graph.edges.retain(|e| {
        e.to.0 != to_junction && !absorbed[e.from.0 as usize] && !absorbed[e.to.0 as usize]
    });
}

#[cfg(test)]
mod tests {
    use crate::graph::{GraphBuilder, JunctionOps, Merge};
    use crate::{FlowOps, Keep, RunnableGraph, Sink, Source, SubstreamOps};

    /// Stages planned for `graph` with fusion on and off.
    fn stages<M>(graph: &RunnableGraph<M>) -> [usize; 2] {
        [true, false].map(|fusion| {
            let plan = super::super::plan(&graph.graph.nodes, &graph.graph.edges, fusion);
            plan.islands.iter().map(|i| i.stages.len()).sum()
        })
    }

    fn fold<T: Send + 'static>() -> Sink<T, crate::Completion<u64>> {
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
        let flow = crate::Flow::<u64>::new()
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
