//! [`PlanDescription`]: how a runnable graph will run, as a value that
//! prints as text and renders as Mermaid or Graphviz DOT.

use std::fmt::{self, Write as _};

use crate::plan::{Made, Plan, PlannedStage};

/// What runs a graph (the executor the planner chose).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Driver {
    /// The sink pulls the whole fused graph itself, on the caller's thread
    /// when it is asked (no island, no task).
    PulledBySink,
    /// The whole graph is one fused loop run as one task of the pool.
    PoolTask,
    /// Islands of stages, each run by its own task of the pool (with an
    /// inbox for its callbacks and timers), joined by async boundaries.
    Islands,
}

/// What one planned stage is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StageKind {
    /// A stage: one operator, or several fused into one (their names
    /// joined with `.`).
    Stage,
    /// The upstream half of async boundary `n` (it hands elements to the
    /// next island); `source` names a fused source it runs itself.
    BoundaryOut {
        /// The boundary's number in the plan.
        boundary: usize,
        /// A fused source the half runs itself, if any.
        source: Option<String>,
    },
    /// The downstream half of async boundary `n` (it takes elements from
    /// the previous island); `sink` names a folding sink it runs itself.
    BoundaryIn {
        /// The boundary's number in the plan.
        boundary: usize,
        /// A folding sink the half runs itself, if any.
        sink: Option<String>,
    },
}

/// One stage of an island.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StageDescription {
    /// Its name: the operator's, or the fused operators' joined with `.`
    /// (`range.map.filter`), or a name given with attributes.
    pub name: String,
    /// Stage or boundary half.
    pub kind: StageKind,
}

/// One island: stages run together by one interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IslandDescription {
    /// Its stages, in plan order.
    pub stages: Vec<StageDescription>,
    /// The connections between them: `(from, to)` stage indices.
    pub connections: Vec<(usize, usize)>,
    /// The dispatcher it asked for, if not the shared pool.
    pub dispatcher: Option<String>,
}

/// How a [`RunnableGraph`](crate::RunnableGraph) runs with a given
/// materializer, before it runs: the driver, the islands with their
/// (fused) stages and the async boundaries between them
/// ([`RunnableGraph::describe`](crate::RunnableGraph::describe)). Prints
/// as text (`Display`); [`to_mermaid`](Self::to_mermaid) and
/// [`to_dot`](Self::to_dot) draw it, for a README or an issue.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanDescription {
    /// What runs the graph.
    pub driver: Driver,
    /// The islands (one for a fused loop; none when the sink pulls).
    pub islands: Vec<IslandDescription>,
    /// The name of what the sink pulls ([`Driver::PulledBySink`]).
    pub pulled: Option<String>,
    /// The async boundaries, as `(from island, to island)`.
    pub boundaries: Vec<(usize, usize)>,
}

impl PlanDescription {
    pub(crate) fn of(plan: &Plan) -> Self {
        let driver = match plan.driver() {
            crate::plan::Driver::Pulled(pulled) => {
                return Self {
                    driver: Driver::PulledBySink,
                    islands: Vec::new(),
                    pulled: Some(pulled.name.to_string()),
                    boundaries: Vec::new(),
                };
            }
            crate::plan::Driver::Task(_) => Driver::PoolTask,
            crate::plan::Driver::Islands => Driver::Islands,
        };
        // Where each boundary's halves are: (island of Up, island of Down).
        let mut ends: Vec<(Option<usize>, Option<usize>)> =
            vec![(None, None); plan.boundaries.len()];
        let islands = plan
            .islands
            .iter()
            .enumerate()
            .map(|(i, island)| {
                let stages = island
                    .stages
                    .iter()
                    .map(|stage| describe_stage(plan, stage, i, &mut ends))
                    .collect();
                let connections = island
                    .conns
                    .iter()
                    .map(|&((from, _), (to, _))| (from as usize, to as usize))
                    .collect();
                let dispatcher = island
                    .stages
                    .iter()
                    .find_map(|s| s.attributes.dispatcher())
                    .map(|d| format!("{d:?}"));
                IslandDescription {
                    stages,
                    connections,
                    dispatcher,
                }
            })
            .collect();
        // A relayed boundary has no downstream stage: the next boundary's
        // upstream half reads it, in the island that half is in.
        for n in 0..ends.len() {
            if ends[n].1.is_none() && plan.boundaries[n].relayed {
                ends[n].1 = ends.get(n + 1).and_then(|next| next.0);
            }
        }
        let boundaries = ends
            .into_iter()
            .filter_map(|(up, down)| Some((up?, down?)))
            .collect();
        Self {
            driver,
            islands,
            pulled: None,
            boundaries,
        }
    }

    /// A Mermaid flowchart: one subgraph per island, its stages as nodes,
    /// async boundaries as dotted arrows between islands.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_streams::prelude::*;
    ///
    /// let system = weir_actor::ActorSystem::new("mermaid").unwrap();
    /// let mat = Materializer::new(&system);
    /// let graph = Source::range(1u32..=3)
    ///     .map(|x| x * 2)
    ///     .async_boundary()
    ///     .filter(|x| x % 3 != 0)
    ///     .to_mat(Sink::collect(), Keep::right);
    /// let chart = graph.describe(&mat).to_mermaid();
    /// assert!(chart.starts_with("flowchart LR"));
    /// assert!(chart.contains("-. async .->"));
    /// system.terminate().wait().unwrap();
    /// ```
    pub fn to_mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        if let Some(pulled) = &self.pulled {
            let _ = writeln!(
                out,
                "  pulled[\"{}\"] --> sink((\"pulled by its sink\"))",
                escape(pulled)
            );
            return out;
        }
        for (i, island) in self.islands.iter().enumerate() {
            let _ = writeln!(
                out,
                "  subgraph island{i}[\"{}\"]",
                island_title(i, island, self.driver)
            );
            for (s, stage) in island.stages.iter().enumerate() {
                let _ = writeln!(out, "    i{i}s{s}[\"{}\"]", escape(&stage_label(stage)));
            }
            out.push_str("  end\n");
            for &(from, to) in &island.connections {
                let _ = writeln!(out, "  i{i}s{from} --> i{i}s{to}");
            }
        }
        for (n, &(up, down)) in self.boundaries.iter().enumerate() {
            let (Some(a), Some(b)) = (self.half(up, n, true), self.half(down, n, false)) else {
                continue;
            };
            let _ = writeln!(out, "  i{up}s{a} -. async .-> i{down}s{b}");
        }
        out
    }

    /// A Graphviz DOT digraph: one cluster per island, its stages as
    /// nodes, async boundaries as dashed edges between islands.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph stream {\n  rankdir=LR;\n  node [shape=box];\n");
        if let Some(pulled) = &self.pulled {
            let _ = writeln!(
                out,
                "  pulled [label=\"{}\\n(pulled by its sink)\"];",
                escape(pulled)
            );
            out.push_str("}\n");
            return out;
        }
        for (i, island) in self.islands.iter().enumerate() {
            let _ = writeln!(out, "  subgraph cluster_{i} {{");
            let _ = writeln!(
                out,
                "    label=\"{}\";",
                island_title(i, island, self.driver)
            );
            for (s, stage) in island.stages.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "    i{i}s{s} [label=\"{}\"];",
                    escape(&stage_label(stage))
                );
            }
            for &(from, to) in &island.connections {
                let _ = writeln!(out, "    i{i}s{from} -> i{i}s{to};");
            }
            out.push_str("  }\n");
        }
        for (n, &(up, down)) in self.boundaries.iter().enumerate() {
            let (Some(a), Some(b)) = (self.half(up, n, true), self.half(down, n, false)) else {
                continue;
            };
            let _ = writeln!(
                out,
                "  i{up}s{a} -> i{down}s{b} [style=dashed, label=\"async\"];"
            );
        }
        out.push_str("}\n");
        out
    }

    /// The stage of boundary `n`'s half in `island` (a relayed boundary's
    /// downstream end is the next boundary's upstream half).
    fn half(&self, island: usize, n: usize, out: bool) -> Option<usize> {
        let stages = &self.islands.get(island)?.stages;
        let find = |want: &dyn Fn(&StageKind) -> bool| stages.iter().position(|s| want(&s.kind));
        if out {
            find(&|k| matches!(k, StageKind::BoundaryOut { boundary, .. } if *boundary == n))
        } else {
            find(&|k| matches!(k, StageKind::BoundaryIn { boundary, .. } if *boundary == n))
                .or_else(|| find(&|k| matches!(k, StageKind::BoundaryOut { boundary, .. } if *boundary == n + 1)))
        }
    }
}

impl fmt::Display for PlanDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.driver {
            Driver::PulledBySink => {
                return write!(
                    f,
                    "pulled by its sink: {}",
                    self.pulled.as_deref().unwrap_or("?")
                );
            }
            Driver::PoolTask => writeln!(f, "one pool task")?,
            Driver::Islands => writeln!(
                f,
                "{} island(s), {} async boundary(ies)",
                self.islands.len(),
                self.boundaries.len()
            )?,
        }
        for (i, island) in self.islands.iter().enumerate() {
            writeln!(f, "{}:", island_title(i, island, self.driver))?;
            for (s, stage) in island.stages.iter().enumerate() {
                writeln!(f, "  [{s}] {}", stage_label(stage))?;
            }
        }
        for (n, (up, down)) in self.boundaries.iter().enumerate() {
            writeln!(f, "boundary {n}: island {up} -> island {down}")?;
        }
        Ok(())
    }
}

fn island_title(i: usize, island: &IslandDescription, driver: Driver) -> String {
    let host = match driver {
        Driver::PoolTask => "pool task",
        _ => "task",
    };
    match &island.dispatcher {
        Some(d) => format!("island {i} ({host}, {d})"),
        None => format!("island {i} ({host})"),
    }
}

fn stage_label(stage: &StageDescription) -> String {
    match &stage.kind {
        StageKind::Stage => stage.name.clone(),
        StageKind::BoundaryOut {
            source: Some(source),
            ..
        } => format!("{source} → {}", stage.name),
        StageKind::BoundaryIn {
            sink: Some(sink), ..
        } => format!("{} → {sink}", stage.name),
        StageKind::BoundaryOut { .. } | StageKind::BoundaryIn { .. } => stage.name.clone(),
    }
}

/// Quotes would end a label in both formats.
fn escape(label: &str) -> String {
    label.replace('"', "'")
}

/// One planned stage of island `island`, noting where each boundary's
/// halves are in `ends` (island of the upstream half, of the downstream).
fn describe_stage(
    plan: &Plan,
    stage: &PlannedStage,
    island: usize,
    ends: &mut [(Option<usize>, Option<usize>)],
) -> StageDescription {
    match &stage.made {
        Made::Stage(s) => StageDescription {
            name: stage
                .attributes
                .name()
                .unwrap_or_else(|| s.name())
                .to_owned(),
            kind: StageKind::Stage,
        },
        Made::Up(n) => {
            ends[*n].0 = Some(island);
            let b = &plan.boundaries[*n];
            // A relay reads the previous boundary through the operators
            // fused into this half.
            let source = match (&b.relay, &b.source) {
                (Some(relay), _) => Some(format!(
                    "boundary {} in → {}",
                    n.saturating_sub(1),
                    relay.name
                )),
                (None, Some((_, name))) => Some(name.to_string()),
                (None, None) => None,
            };
            StageDescription {
                name: format!("boundary {n} out"),
                kind: StageKind::BoundaryOut {
                    boundary: *n,
                    source,
                },
            }
        }
        Made::Down(n) => {
            ends[*n].1 = Some(island);
            let sink = plan.boundaries[*n]
                .sink
                .as_ref()
                .map(|(_, name, _)| name.to_string());
            StageDescription {
                name: format!("boundary {n} in"),
                kind: StageKind::BoundaryIn { boundary: *n, sink },
            }
        }
    }
}
