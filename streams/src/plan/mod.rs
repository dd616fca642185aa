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
    pub(crate) values: Values,
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
        values: Values,
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
    match cut(nodes, edges, absorbed, fusion) {
        Cut::Pulled(pulled) => Plan {
            islands: Vec::new(),
            boundaries: Vec::new(),
            pulled: Some(pulled),
        },
        Cut::Units(units, unit_of) => place(units, &unit_of, edges),
    }
}

/// The materialized value slots a planned stage fills: none (a boundary's
/// upstream half), one, or two (a host with the sink it runs).
pub(crate) type Values = arrayvec::ArrayVec<usize, 2>;

/// A unit with the chain nodes it covers and its vertices: a stage unit
/// is one vertex (`up == down`), a boundary unit two, and a boundary
/// relayed into the next shares its downstream vertex with the next one's
/// upstream half (one stage runs both).
struct Placed {
    unit: Unit,
    first: usize,
    last: usize,
    up: usize,
    down: usize,
}

enum Cut {
    /// The pull rule took the whole graph.
    Pulled(PullPlan),
    /// The units in chain order, and the unit of every node.
    Units(Vec<Placed>, Vec<usize>),
}

/// Steps 1 and 2: the graph cut into chains, each chain into units.
fn cut(nodes: &[Node], edges: &[Edge], absorbed: Option<&[bool]>, fusion: bool) -> Cut {
    let n = nodes.len();
    // Each node's successor along a 1-to-1 link, whether it has a
    // predecessor on one, and whether a chain (or a junction's fused
    // node, for `absorbed` ones) has taken it.
    let mut next: Vec<(Option<usize>, bool, bool)> = (0..n)
        .map(|i| (None, false, absorbed.is_some_and(|a| a[i])))
        .collect();
    for edge in edges {
        let (a, b) = (edge.from.0 as usize, edge.to.0 as usize);
        if nodes[a].kind.ports().1 == 1 && nodes[b].kind.ports().0 == 1 && a != b {
            next[a].0 = Some(b);
            next[b].1 = true;
        }
    }
    let live = next.iter().filter(|node| !node.2).count();
    let mut units: Vec<Placed> = Vec::new();
    let mut unit_of = vec![usize::MAX; n];
    let mut chain = Vec::new();
    // Chains from their heads, then whatever a cycle left.
    for (pass, head) in (0..2).flat_map(|pass| (0..n).map(move |i| (pass, i))) {
        if pass == 0 && next[head].1 {
            continue;
        }
        chain.clear();
        let mut at = Some(head);
        while let Some(i) = at.filter(|&i| !next[i].2) {
            next[i].2 = true;
            chain.push(i);
            at = next[i].0;
        }
        if chain.is_empty() {
            continue;
        }
        // The pull rule takes the whole graph or nothing.
        if fusion
            && units.is_empty()
            && chain.len() == live
            && let Some(pulled) = rules::pulled(nodes, &chain)
        {
            return Cut::Pulled(pulled);
        }
        for (unit, first, last) in rules::units(nodes, &chain, fusion) {
            for &node in &chain[first..=last] {
                unit_of[node] = units.len();
            }
            units.push(Placed {
                unit,
                first: chain[first],
                last: chain[last],
                up: usize::MAX,
                down: usize::MAX,
            });
        }
    }
    Cut::Units(units, unit_of)
}

impl Unit {
    /// A boundary whose upstream half takes from the previous boundary.
    fn relays_in(&self) -> bool {
        matches!(self, Unit::Boundary(b) if b.relay.is_some())
    }
}

/// One vertex of the unit graph: its union-find root, the island it
/// roots (if it is a root), and its place (island, stage index).
struct Vertex {
    root: usize,
    island: usize,
    place: (usize, u32),
    stage: Option<PlannedStage>,
}

/// Step 3: units joined by an edge share an island; islands come in the
/// order of their first node and stages in node order.
fn place(mut units: Vec<Placed>, unit_of: &[usize], edges: &[Edge]) -> Plan {
    let mut vertices = 0;
    for u in 0..units.len() {
        units[u].up = if units[u].unit.relays_in() {
            units[u - 1].down
        } else {
            vertices += 1;
            vertices - 1
        };
        units[u].down = match units[u].unit {
            Unit::Boundary(_) => {
                vertices += 1;
                vertices - 1
            }
            Unit::Stage { .. } => units[u].up,
        };
    }
    let mut vertex: Vec<Vertex> = (0..vertices)
        .map(|v| Vertex {
            root: v,
            island: usize::MAX,
            place: (0, 0),
            stage: None,
        })
        .collect();
    // Edges between units join vertices into islands.
    let mut links = Vec::new();
    for edge in edges {
        let (a, b) = (unit_of[edge.from.0 as usize], unit_of[edge.to.0 as usize]);
        if a == b {
            continue;
        }
        let (from, to) = (units[a].down, units[b].up);
        if from == to {
            continue; // into a relay: inside one stage
        }
        links.push((from, edge.from.1, to, edge.to.1));
        let (ra, rb) = (find(&mut vertex, from), find(&mut vertex, to));
        vertex[ra.max(rb)].root = ra.min(rb);
    }
    let mut order: Vec<(usize, usize)> = Vec::with_capacity(vertices); // (first node, vertex)
    for placed in &units {
        if !placed.unit.relays_in() {
            order.push((placed.first, placed.up));
        }
        if placed.down != placed.up {
            order.push((placed.last, placed.down));
        }
    }
    order.sort_unstable();
    let mut sizes: Vec<u32> = Vec::new();
    for &(_, v) in &order {
        let r = find(&mut vertex, v);
        if vertex[r].island == usize::MAX {
            vertex[r].island = sizes.len();
            sizes.push(0);
        }
        let island = vertex[r].island;
        vertex[v].place = (island, sizes[island]);
        sizes[island] += 1;
    }
    let boundaries = planned_stages(units, &mut vertex);
    let mut islands: Vec<IslandPlan> = sizes
        .iter()
        .map(|&size| IslandPlan {
            stages: Vec::with_capacity(size as usize),
            conns: Vec::new(),
        })
        .collect();
    for &(_, v) in &order {
        let stage = vertex[v].stage.take().expect("each vertex is placed once");
        islands[vertex[v].place.0].stages.push(stage);
    }
    for (from, out_port, to, in_port) in links {
        let ((island, up), (_, down)) = (vertex[from].place, vertex[to].place);
        islands[island]
            .conns
            .push(((up, out_port), (down, in_port)));
    }
    Plan {
        islands,
        boundaries,
        pulled: None,
    }
}

/// Each unit's planned stages on its vertices; the boundaries in order.
fn planned_stages(units: Vec<Placed>, vertex: &mut [Vertex]) -> Vec<BoundaryPlan> {
    let mut boundaries = Vec::new();
    for placed in units {
        match placed.unit {
            Unit::Stage {
                stage,
                attributes,
                values,
            } => {
                vertex[placed.up].stage = Some(PlannedStage {
                    made: Made::Stage(stage),
                    attributes,
                    values,
                });
            }
            Unit::Boundary(boundary) => {
                let b = boundaries.len();
                let (up, down) = boundary.halves.clone();
                vertex[placed.up].stage = Some(PlannedStage {
                    made: Made::Up(b),
                    attributes: up,
                    values: Values::new(),
                });
                if !boundary.relayed {
                    vertex[placed.down].stage = Some(PlannedStage {
                        made: Made::Down(b),
                        attributes: down,
                        values: boundary.sink.iter().map(|s| s.2).collect(),
                    });
                }
                boundaries.push(boundary);
            }
        }
    }
    boundaries
}

/// Union-find root, with path halving.
fn find(vertex: &mut [Vertex], mut v: usize) -> usize {
    while vertex[v].root != v {
        vertex[v].root = vertex[vertex[v].root].root;
        v = vertex[v].root;
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
