//! The planner: one pass at materialization that decides how a blueprint
//! graph runs.
//!
//! Constructors only record nodes (`graph`); every
//! decision that depends on more than one node is made here, once, and
//! applies however the blueprint was built (`range.scan(..)` followed by
//! nine `.map(..)` calls fuses its maps exactly like a flow of nine maps
//! composed first):
//!
//! 0. **Fan-in.** A fan-in junction whose inputs are all fused iterator
//!    chains becomes one iterator source node first ([`fan_in`]), so
//!    the chain rules below see it as any iterator source.
//! 1. **Chains.** The graph is cut into maximal chains: runs of nodes in
//!    which each link joins a node's only outlet to the next node's only
//!    inlet. Fusion happens only inside a chain (the rules are in
//!    [`rules`], each with a doc comment saying when it applies).
//! 2. **Units.** Each chain becomes units: one stage each (plain, or fused
//!    from several nodes), or an async boundary (two halves).
//! 3. **Islands.** Units joined by an edge run on the same island; an
//!    async boundary's upstream half ends one island and its downstream
//!    half starts another. Stages keep the order of their first node.
//!
//! With fusion off ([`MaterializerBuilder::fusion`](crate::MaterializerBuilder::fusion))
//! every node runs as its own stage and every boundary as two plain
//! halves, so any graph can be run both ways and compared.
//!
//! A plan holds factories only: each run makes fresh logics from it.

mod boundary;
mod driver;
mod fan_in;
pub(crate) mod graph;
mod mat;
mod rules;
mod supervise;

pub(crate) use supervise::supervise;

use std::sync::Arc;

use crate::fusion::{ConsumerNode, IterNode, PullNode, StepNode};
use crate::stage::Attributes;
use crate::stage::ErasedStage;
pub(crate) use boundary::{BoundaryFactory, Half};
pub(crate) use driver::{Driver, TaskPlan};
use graph::{Edge, Node, PortRef};

/// What runs for one blueprint graph.
pub(crate) struct Plan {
    pub(crate) islands: Vec<IslandPlan>,
    pub(crate) boundaries: Vec<BoundaryPlan>,
    /// Set when the whole graph runs in a sink's pull, on no island.
    pub(crate) pulled: Option<PullPlan>,
}

/// The stages of one island and the connections between them.
pub(crate) struct IslandPlan {
    pub(crate) stages: Vec<PlannedStage>,
    /// `(stage, outlet)` to `(stage, inlet)`, stage indices in this island.
    pub(crate) conns: Vec<(PortRef, PortRef)>,
}

/// Where a planned stage's logic comes from.
pub(crate) enum Made {
    Stage(Arc<dyn ErasedStage>),
    /// The upstream half of boundary `n` of the plan.
    Up(usize),
    /// The downstream half of boundary `n` of the plan.
    Down(usize),
}

pub(crate) struct PlannedStage {
    pub(crate) made: Made,
    /// The stage's attributes over its defaults (for a boundary half, those
    /// of the nodes fused into it).
    pub(crate) attributes: Attributes,
    /// The node value slots the stage's materialized values fill, in the
    /// order it produces them. Nodes fused away produce `()`.
    pub(crate) values: Vec<usize>,
}

/// An async boundary with what was fused into its halves.
pub(crate) struct BoundaryPlan {
    pub(crate) factory: Arc<dyn BoundaryFactory>,
    /// The input buffer of the stage that receives from it.
    pub(crate) capacity: usize,
    /// A fused source run by the upstream half, and its name.
    pub(crate) source: Option<(Arc<dyn IterNode>, Arc<str>)>,
    /// A folding sink run by the downstream half, its name and value slot.
    pub(crate) sink: Option<(Arc<dyn ConsumerNode>, Arc<str>, usize)>,
    /// The attributes of the nodes fused into each half (a dispatcher one
    /// of them asks for applies to the half's island).
    pub(crate) halves: (Attributes, Attributes),
    /// The upstream half takes its elements from the previous boundary of
    /// the plan (which is `relayed`) through these operators.
    pub(crate) relay: Option<Relay>,
    /// The downstream half is not a stage: the next boundary's upstream
    /// half reads this hand-over (see the relay rule in [`rules`]).
    pub(crate) relayed: bool,
}

/// The operators between two boundaries, run by the second boundary's
/// upstream half over what it takes from the first.
pub(crate) struct Relay {
    pub(crate) steps: Vec<Arc<dyn StepNode>>,
    /// The name of the upstream half that runs them.
    pub(crate) name: Arc<str>,
}

impl Relay {
    /// `leaf` (the first boundary's downstream end) with the operators
    /// fused into it.
    pub(crate) fn adapt(&self, leaf: &Arc<dyn IterNode>) -> Arc<dyn IterNode> {
        self.steps
            .iter()
            .fold(Arc::clone(leaf), |iter, step| step.after_iter(&*iter))
    }
}

/// A fused source run by a sink's pull.
pub(crate) struct PullPlan {
    pub(crate) pull: Arc<dyn PullNode>,
    pub(crate) iter: Arc<dyn IterNode>,
    pub(crate) name: Arc<str>,
    pub(crate) attributes: Attributes,
    /// The value slot of the sink's first node.
    pub(crate) slot: usize,
}

/// One unit of a chain: a stage or a boundary, covering the chain's nodes
/// `first..=last`.
pub(crate) enum Unit {
    Stage {
        stage: Arc<dyn ErasedStage>,
        attributes: Attributes,
        values: Vec<usize>,
    },
    Boundary(BoundaryPlan),
}

/// Plan a closed graph (every port connected).
pub(crate) fn plan(nodes: &[Node], edges: &[Edge], fusion: bool) -> Plan {
    // Supervised simple operators catch per element; only they do.
    let supervised = supervise(nodes);
    let rewritten = if fusion {
        fan_in::rewrite(&supervised, edges)
    } else {
        None
    };
    let (nodes, edges, absorbed) = match &rewritten {
        Some(graph) => (
            &graph.nodes[..],
            &graph.edges[..],
            Some(&graph.absorbed[..]),
        ),
        None => (&supervised[..], edges, None),
    };
    let n = nodes.len();
    // Each node's successor and predecessor along a 1-to-1 link.
    let mut next: Vec<Option<usize>> = vec![None; n];
    let mut prev: Vec<Option<usize>> = vec![None; n];
    for edge in edges {
        let (a, b) = (edge.from.0 as usize, edge.to.0 as usize);
        if nodes[a].kind.ports().1 == 1 && nodes[b].kind.ports().0 == 1 && a != b {
            next[a] = Some(b);
            prev[b] = Some(a);
        }
    }

    // Chains, from their heads (then whatever a cycle left).
    // Nodes fused into a junction's node run in it, in no chain.
    let mut seen = absorbed.map_or_else(|| vec![false; n], <[bool]>::to_vec);
    let live = seen.iter().filter(|s| !**s).count();
    let mut chains: Vec<Vec<usize>> = Vec::new();
    let heads = (0..n).filter(|&i| prev[i].is_none()).chain(0..n);
    for head in heads {
        if seen[head] {
            continue;
        }
        let mut chain = Vec::new();
        let mut at = Some(head);
        while let Some(i) = at.filter(|&i| !seen[i]) {
            seen[i] = true;
            chain.push(i);
            at = next[i];
        }
        chains.push(chain);
    }

    // The pull rule takes the whole graph or nothing.
    if fusion
        && let [chain] = chains.as_slice()
        && chain.len() == live
        && let Some(pulled) = rules::pulled(nodes, chain)
    {
        return Plan {
            islands: Vec::new(),
            boundaries: Vec::new(),
            pulled: Some(pulled),
        };
    }

    // Units, and the unit of every node.
    let mut units: Vec<(Unit, usize, usize)> = Vec::new();
    let mut unit_of = vec![usize::MAX; n];
    for chain in &chains {
        for (unit, first, last) in rules::units(nodes, chain, fusion) {
            for &node in &chain[first..=last] {
                unit_of[node] = units.len();
            }
            units.push((unit, chain[first], chain[last]));
        }
    }

    // Vertices: a stage unit is one, a boundary unit two (up, down).
    let mut up_vertex = vec![usize::MAX; units.len()];
    let mut down_vertex = vec![usize::MAX; units.len()];
    let mut vertices = 0;
    // A boundary relayed into the next shares its downstream vertex with
    // the next one's upstream half: one stage runs both.
    let relays_in = |unit: &Unit| matches!(unit, Unit::Boundary(b) if b.relay.is_some());
    for (u, (unit, _, _)) in units.iter().enumerate() {
        if relays_in(unit) {
            up_vertex[u] = down_vertex[u - 1];
        } else {
            up_vertex[u] = vertices;
            vertices += 1;
        }
        down_vertex[u] = match unit {
            Unit::Boundary(_) => {
                vertices += 1;
                vertices - 1
            }
            Unit::Stage { .. } => up_vertex[u],
        };
    }
    // Edges between units join vertices into islands.
    let mut links = Vec::new();
    let mut root: Vec<usize> = (0..vertices).collect();
    for edge in edges {
        let (a, b) = (unit_of[edge.from.0 as usize], unit_of[edge.to.0 as usize]);
        if a == b {
            continue;
        }
        let (from, to) = (down_vertex[a], up_vertex[b]);
        if from == to {
            continue; // into a relay: inside one stage
        }
        links.push((from, edge.from.1, to, edge.to.1));
        let (ra, rb) = (find(&mut root, from), find(&mut root, to));
        root[ra.max(rb)] = ra.min(rb);
    }

    // Islands in the order of their first node; stages in node order.
    let mut order: Vec<(usize, usize)> = Vec::new(); // (first node, vertex)
    for (u, (unit, first, last)) in units.iter().enumerate() {
        if !relays_in(unit) {
            order.push((*first, up_vertex[u]));
        }
        if down_vertex[u] != up_vertex[u] {
            order.push((*last, down_vertex[u]));
        }
    }
    order.sort_unstable();
    let mut island_of_root = vec![usize::MAX; vertices];
    let mut place = vec![(0usize, 0u32); vertices];
    let mut islands: Vec<Vec<usize>> = Vec::new();
    for &(_, vertex) in &order {
        let r = find(&mut root, vertex);
        if island_of_root[r] == usize::MAX {
            island_of_root[r] = islands.len();
            islands.push(Vec::new());
        }
        let island = island_of_root[r];
        let index = u32::try_from(islands[island].len()).expect("fewer than 2^32 stages");
        place[vertex] = (island, index);
        islands[island].push(vertex);
    }

    // The planned stages.
    let mut slots: Vec<Option<PlannedStage>> = (0..vertices).map(|_| None).collect();
    let mut boundaries = Vec::new();
    for (u, (unit, _, _)) in units.into_iter().enumerate() {
        match unit {
            Unit::Stage {
                stage,
                attributes,
                values,
            } => {
                slots[up_vertex[u]] = Some(PlannedStage {
                    made: Made::Stage(stage),
                    attributes,
                    values,
                });
            }
            Unit::Boundary(boundary) => {
                let b = boundaries.len();
                let down_values = boundary.sink.iter().map(|s| s.2).collect();
                let (up, down) = boundary.halves.clone();
                slots[up_vertex[u]] = Some(PlannedStage {
                    made: Made::Up(b),
                    attributes: up,
                    values: Vec::new(),
                });
                if !boundary.relayed {
                    slots[down_vertex[u]] = Some(PlannedStage {
                        made: Made::Down(b),
                        attributes: down,
                        values: down_values,
                    });
                }
                boundaries.push(boundary);
            }
        }
    }
    let mut planned: Vec<IslandPlan> = islands
        .iter()
        .map(|vertices| IslandPlan {
            stages: vertices
                .iter()
                .map(|&v| slots[v].take().expect("each vertex is placed once"))
                .collect(),
            conns: Vec::new(),
        })
        .collect();
    for (from, out_port, to, in_port) in links {
        let ((island, up), (_, down)) = (place[from], place[to]);
        planned[island]
            .conns
            .push(((up, out_port), (down, in_port)));
    }
    Plan {
        islands: planned,
        boundaries,
        pulled: None,
    }
}

/// Union-find root, with path halving.
fn find(root: &mut [usize], mut v: usize) -> usize {
    while root[v] != v {
        root[v] = root[root[v]];
        v = root[v];
    }
    v
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::plan;
    use crate::prelude::*;

    /// How many stages each island of `graph`'s plan runs.
    fn stages<M>(graph: &RunnableGraph<M>, fusion: bool) -> Vec<usize> {
        let plan = plan(&graph.graph.nodes, &graph.graph.edges, fusion);
        plan.islands
            .iter()
            .map(|island| island.stages.len())
            .collect()
    }

    #[test]
    fn operators_between_two_boundaries_run_inside_the_second_ones_upstream_half() {
        let graph = Source::range(0u64..10)
            .async_boundary()
            .map(|x| x + 1)
            .filter(|x| x % 2 == 0)
            .async_boundary()
            .async_boundary()
            .map(|x| x * 2)
            .to(Sink::ignore());
        // The source into the first boundary; one relay stage per island
        // between boundaries; the last map and the sink in the last half.
        assert_eq!(stages(&graph, true), [1, 1, 1, 1]);
        let plan = plan(&graph.graph.nodes, &graph.graph.edges, true);
        let relays: Vec<(bool, bool)> = plan
            .boundaries
            .iter()
            .map(|b| (b.relay.is_some(), b.relayed))
            .collect();
        assert_eq!(relays, [(false, true), (true, true), (true, false)]);
        // Unfused, every node is a stage and every boundary two halves.
        assert_eq!(stages(&graph, false), [2, 4, 2, 3]);
    }
}
