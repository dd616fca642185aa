//! The fusion rules, each written once. They look at one chain of nodes
//! (see the module docs of `crate::plan`) and say which nodes run as one
//! stage. Every fused form keeps the semantics of the unfused stages:
//! elements are produced only on demand, in order; completion, failure
//! and cancellation travel as they would through separate stages; a panic
//! fails the stream naming the fused stage. The differential tests
//! (`tests/tests/streams_fusion_differential.rs`) run random graphs both
//! ways and compare.

use std::sync::Arc;

use super::{BoundaryPlan, PullPlan, Relay, Unit};
use crate::fusion::{ConsumerNode, HostNode, IterNode, StepNode, any_leads};
use crate::plan::graph::{Fuses, Kind, Node};
use crate::stage::{Attributes, DEFAULT_INPUT_BUFFER, ErasedStage, stage_attributes};

/// The nodes `from..` of `chain` that are simple operators, as far as they go.
fn steps<'a>(nodes: &'a [Node], chain: &[usize], from: usize) -> Vec<&'a Arc<dyn StepNode>> {
    chain[from.min(chain.len())..]
        .iter()
        .map_while(|&i| match &nodes[i].kind {
            Kind::Step(step) => Some(step),
            _ => None,
        })
        .collect()
}

/// `a.b.c`: the names of fused nodes, in order, written into one string.
fn joined(nodes: &[Node], chain: &[usize]) -> String {
    let length = chain.iter().map(|&i| nodes[i].name().len() + 1).sum();
    let mut name = String::with_capacity(length);
    for (n, &i) in chain.iter().enumerate() {
        if n > 0 {
            name.push('.');
        }
        name.push_str(&nodes[i].name());
    }
    name
}

/// One stage run for the nodes `covers` (their attributes merged, later
/// ones overriding), named after the nodes `named`, filling `values`.
fn stage_unit(
    nodes: &[Node],
    stage: Arc<dyn ErasedStage>,
    covers: &[usize],
    named: &[usize],
    values: &[usize],
) -> Unit {
    let set = merged(nodes, covers).with_name(joined(nodes, named));
    Unit::Stage {
        attributes: stage_attributes(&*stage, &set),
        stage,
        values: values.iter().copied().collect(),
    }
}

/// `consumer` with the operators `steps` run inside it, first to last.
fn stepped(
    steps: &[&Arc<dyn StepNode>],
    consumer: &Arc<dyn ConsumerNode>,
) -> Arc<dyn ConsumerNode> {
    steps
        .iter()
        .rev()
        .fold(Arc::clone(consumer), |consumer, step| {
            step.before_consumer(&*consumer)
        })
}

/// `iter` with the operators `steps` fused into it as adapters.
pub(super) fn adapted(iter: &Arc<dyn IterNode>, steps: &[&Arc<dyn StepNode>]) -> Arc<dyn IterNode> {
    steps
        .iter()
        .fold(Arc::clone(iter), |iter, step| step.after_iter(&*iter))
}

/// **Pull.** Applies when the whole graph (what other rules left of it) is
/// one chain: an iterator (or
/// poll-function) source, simple operators, then a sink made with
/// [`Sink::with_pull`](crate::Sink::with_pull) (the pull marks the sink's
/// first node; its other nodes are replaced too). No island runs: the
/// sink's pull gets the fused source as a [`Pull`](crate::Pull) and gives
/// the sink's materialized value.
pub(super) fn pulled(nodes: &[Node], chain: &[usize]) -> Option<PullPlan> {
    let Kind::Iter(iter) = &nodes[chain[0]].kind else {
        return None;
    };
    let marked = chain.iter().position(|&i| nodes[i].pull.is_some())?;
    let between = steps(nodes, chain, 1);
    if marked == 0 || between.len() + 1 < marked {
        return None;
    }
    let pull = Arc::clone(nodes[chain[marked]].pull.as_ref()?);
    let sink = &nodes[chain[marked]];
    Some(PullPlan {
        pull,
        iter: adapted(iter, &between[..marked - 1]),
        name: format!("{}.{}", joined(nodes, &chain[..marked]), sink.name()).into(),
        attributes: sink.full_attributes(),
        slot: chain[marked],
    })
}

/// The units of one chain, each with the positions (in `chain`) of its
/// first and last node.
pub(super) fn units<'a>(
    nodes: &'a [Node],
    chain: &'a [usize],
    fusion: bool,
) -> impl Iterator<Item = (Unit, usize, usize)> + 'a {
    let mut at = 0;
    let mut relayed = false;
    std::iter::from_fn(move || {
        if at == chain.len() {
            return None;
        }
        let (unit, last) = if !fusion {
            (plain(nodes, chain, at), at)
        } else if relayed {
            relay(nodes, chain, at)
        } else {
            fused(nodes, chain, at)
        };
        relayed = matches!(&unit, Unit::Boundary(b) if b.relayed);
        let first = at;
        at = last + 1;
        Some((unit, first, last))
    })
}

/// The node at `chain[at]` as its own stage (a boundary as two plain halves).
fn plain(nodes: &[Node], chain: &[usize], at: usize) -> Unit {
    let node = &nodes[chain[at]];
    match &node.kind {
        Kind::Boundary(factory) => Unit::Boundary(BoundaryPlan {
            factory: Arc::clone(factory),
            capacity: receiver_buffer(nodes, chain, at + 1),
            source: None,
            sink: None,
            halves: (Attributes::new(), Attributes::new()),
            relay: None,
            relayed: false,
        }),
        kind => Unit::Stage {
            stage: kind.stage().expect("only a boundary has no stage"),
            attributes: node.full_attributes(),
            values: [chain[at]].into_iter().collect(),
        },
    }
}

/// The input buffer of the node at `chain[at]`, which receives from a
/// boundary before it (the default when the chain ends there).
fn receiver_buffer(nodes: &[Node], chain: &[usize], at: usize) -> usize {
    chain.get(at).map_or(DEFAULT_INPUT_BUFFER, |&i| {
        nodes[i].full_attributes().input_buffer()
    })
}

/// The unit starting at `chain[at]` with fusion on, and the position of
/// its last node: the first rule that applies, else the node alone.
fn fused(nodes: &[Node], chain: &[usize], at: usize) -> (Unit, usize) {
    let here = Here::new(nodes, chain, at);
    let unit = match &nodes[chain[at]].kind {
        Kind::Boundary(_) => return boundary(nodes, chain, at, None),
        Kind::Iter(iter) => flatten_into_sink(&here)
            .or_else(|| iter_into_split(&here, iter))
            .or_else(|| iter_into_sink(&here, iter))
            .or_else(|| iter_into_boundary(&here, iter))
            .or_else(|| fused_iter(&here, iter)),
        Kind::Host(_, host) => flatten_into_sink(&here).or_else(|| host_into_sink(&here, host)),
        Kind::Step(first) => flatten_into_sink(&here)
            .or_else(|| steps_into_sink(&here, first))
            .or_else(|| operator_run(&here, first)),
        Kind::Stage(_) | Kind::Consumer(_) => flatten_into_sink(&here),
    };
    unit.unwrap_or_else(|| (plain(nodes, chain, at), at))
}

/// Where a rule looks: the node at `chain[at]`, the simple operators
/// right after it (`run`), and the node after those (at `after`).
struct Here<'a> {
    nodes: &'a [Node],
    chain: &'a [usize],
    at: usize,
    run: Vec<&'a Arc<dyn StepNode>>,
    after: usize,
}

impl<'a> Here<'a> {
    fn new(nodes: &'a [Node], chain: &'a [usize], at: usize) -> Self {
        let run = steps(nodes, chain, at + 1);
        let after = at + 1 + run.len();
        Self {
            nodes,
            chain,
            at,
            run,
            after,
        }
    }

    /// The node after the operators, if the chain goes on.
    fn next(&self) -> Option<&'a Node> {
        self.chain.get(self.after).map(|&i| &self.nodes[i])
    }

    /// The folding sink after the operators, if that is what comes next.
    fn next_consumer(&self) -> Option<&'a Arc<dyn ConsumerNode>> {
        match self.next().map(|node| &node.kind) {
            Some(Kind::Consumer(consumer)) => Some(consumer),
            _ => None,
        }
    }

    /// A stage for the nodes from here up to and including `chain[last]`,
    /// named after those up to `chain[named]`.
    fn stage(
        &self,
        stage: Arc<dyn ErasedStage>,
        last: usize,
        named: usize,
        values: &[usize],
    ) -> Unit {
        let chain = self.chain;
        stage_unit(
            self.nodes,
            stage,
            &chain[self.at..=last],
            &chain[self.at..=named],
            values,
        )
    }
}

/// **Flatten into folding sink.** A `flat_map_concat` (or `flatten`),
/// simple operators, then a folding sink: one sink stage that asks
/// upstream for one element at a time and runs each inner source straight
/// into the sink's consumer, the operators inside it. An inner source
/// that fuses into an iterator is drained in batches; any other runs as
/// the flattening stage would run it (sub-island or its own stream) and
/// feeds the consumer as its elements come. A framing stage
/// (`Framing::delimiter`, ...) fuses the same way: it cuts each chunk into
/// frames and feeds them to the consumer.
fn flatten_into_sink(here: &Here<'_>) -> Option<(Unit, usize)> {
    let Some(Fuses::Flatten(flatten)) = &here.nodes[here.chain[here.at]].fuses else {
        return None;
    };
    let consumer = here.next_consumer().filter(|_| !any_leads(&here.run))?;
    let stage = flatten.with_consumer(&*stepped(&here.run, consumer));
    let after = here.after;
    let sink = here.chain[after];
    Some((here.stage(stage, after, after - 1, &[sink]), after))
}

/// **Iterator into splitting stage.** An iterator source and simple
/// operators (fused into it as adapters) right before `group_by`,
/// `split_when` or `split_after`: the splitting stage takes its elements
/// from the iterator itself, one per element it routes (as many as it
/// would pull), with no port and no interpreter event per element.
fn iter_into_split(here: &Here<'_>, iter: &Arc<dyn IterNode>) -> Option<(Unit, usize)> {
    let Some(Fuses::Split(splitter)) = &here.next()?.fuses else {
        return None;
    };
    let stage = splitter.after_iter(&*adapted(iter, &here.run));
    let after = here.after;
    let split = here.chain[after];
    Some((here.stage(stage, after, after, &[split]), after))
}

/// **Iterator into folding sink.** An iterator source, simple operators
/// (fused into it as adapters), then a folding sink: one port-less stage
/// that drives the iterator into the sink in a loop, a budget of
/// elements per turn.
fn iter_into_sink(here: &Here<'_>, iter: &Arc<dyn IterNode>) -> Option<(Unit, usize)> {
    let consumer = here.next_consumer()?;
    let stage = consumer.after_iter(&*adapted(iter, &here.run));
    let after = here.after;
    let sink = here.chain[after];
    Some((here.stage(stage, after, after, &[sink]), after))
}

/// **Iterator into boundary.** An iterator source and simple operators
/// right before an async boundary run inside the boundary's upstream half
/// (a loop into its batch, no ports).
fn iter_into_boundary(here: &Here<'_>, iter: &Arc<dyn IterNode>) -> Option<(Unit, usize)> {
    let Kind::Boundary(_) = here.next()?.kind else {
        return None;
    };
    let covered = &here.chain[here.at..here.after];
    let name = Arc::from(joined(here.nodes, covered));
    let source = UpSource::Iter(adapted(iter, &here.run), name);
    let attributes = merged(here.nodes, covered);
    Some(boundary(
        here.nodes,
        here.chain,
        here.after,
        Some((source, attributes)),
    ))
}

/// **Fused iterator.** Simple operators after an iterator source become
/// adapters of the iterator: one source stage, one indirect call per
/// operator per batch.
fn fused_iter(here: &Here<'_>, iter: &Arc<dyn IterNode>) -> Option<(Unit, usize)> {
    if here.run.is_empty() {
        return None;
    }
    let stage = adapted(iter, &here.run).stage();
    let last = here.after - 1;
    let source = here.chain[here.at];
    Some((here.stage(stage, last, last, &[source]), last))
}

/// **Host into folding sink.** A source that can host a folding sink
/// (`Source::actor_ref`), simple operators, then a folding sink: one
/// stage, the operators run inside the sink's consumer.
fn host_into_sink(here: &Here<'_>, host: &Arc<dyn HostNode>) -> Option<(Unit, usize)> {
    let consumer = here.next_consumer().filter(|_| !any_leads(&here.run))?;
    let node = &here.nodes[here.chain[here.at]];
    let stage = host.with_consumer(&node.full_attributes(), &*stepped(&here.run, consumer));
    let after = here.after;
    let values = [here.chain[here.at], here.chain[after]];
    Some((here.stage(stage, after, after, &values), after))
}

/// **Operators into folding sink.** Simple operators right before a
/// folding sink run inside the sink's consumer: one sink stage, named
/// after the operators (what fails in it is most likely theirs, and a
/// named operator keeps its name).
fn steps_into_sink(here: &Here<'_>, first: &Arc<dyn StepNode>) -> Option<(Unit, usize)> {
    let consumer = here.next_consumer()?;
    let run: Vec<_> = std::iter::once(first)
        .chain(here.run.iter().copied())
        .collect();
    if any_leads(&run) {
        return None;
    }
    let stage = stepped(&run, consumer).stage();
    let after = here.after;
    let sink = here.chain[after];
    Some((here.stage(stage, after, after - 1, &[sink]), after))
}

/// **Operator run.** Two or more simple operators in a row run as one
/// flow stage, up to one that leads (`scan`, which then runs as its own
/// stage).
fn operator_run(here: &Here<'_>, first: &Arc<dyn StepNode>) -> Option<(Unit, usize)> {
    let mut run: Vec<_> = std::iter::once(first)
        .chain(here.run.iter().copied())
        .collect();
    run.truncate(
        run.iter()
            .position(|step| step.leads())
            .unwrap_or(run.len()),
    );
    if run.len() < 2 {
        return None;
    }
    let mut cont = None;
    for step in run.iter().rev() {
        cont = Some(step.before(cont));
    }
    let head = run[0].head(cont.expect("a run has steps"));
    let stage = run[run.len() - 1].run_stage(head);
    let end = here.at + run.len() - 1;
    let first_node = here.chain[here.at];
    Some((here.stage(stage, end, end, &[first_node]), end))
}

/// The attributes of fused nodes, later ones overriding earlier ones.
fn merged(nodes: &[Node], chain: &[usize]) -> Attributes {
    chain
        .iter()
        .fold(Attributes::new(), |a, &i| a.and(&nodes[i].attributes))
}

/// What a boundary's upstream half runs instead of taking elements from
/// its inlet.
enum UpSource {
    /// A fused iterator source.
    Iter(Arc<dyn IterNode>, Arc<str>),
    /// The previous boundary's hand-over, through operators.
    Relay(Relay),
}

/// **Relay.** Applies after a boundary whose downstream half is followed
/// by simple operators (or none) and another boundary: the operators run
/// inside the second boundary's upstream half, which takes batches
/// straight from the first boundary's hand-over (the island between the
/// two is one loop over batches, no ports). The unit starts at `chain[at]`,
/// the first node after the first boundary.
fn relay(nodes: &[Node], chain: &[usize], at: usize) -> (Unit, usize) {
    let run = steps(nodes, chain, at);
    let next = at + run.len();
    let name: Arc<str> = if run.is_empty() {
        Arc::from("async-boundary-relay")
    } else {
        Arc::from(joined(nodes, &chain[at..next]))
    };
    let relay = Relay {
        steps: run.into_iter().cloned().collect(),
        name,
    };
    let attributes = merged(nodes, &chain[at..next]);
    boundary(
        nodes,
        chain,
        next,
        Some((UpSource::Relay(relay), attributes)),
    )
}

/// **Boundary into folding sink.** The boundary at `chain[at]`; simple
/// operators and a folding sink right after it run inside its downstream
/// half (a loop over each batch, no ports), sized by the sink's input
/// buffer. `source` is what the upstream half runs, if anything. When
/// the operators lead to another boundary instead, this one is relayed
/// into it (see [`relay`]): the unit covers this boundary alone.
fn boundary(
    nodes: &[Node],
    chain: &[usize],
    at: usize,
    source: Option<(UpSource, Attributes)>,
) -> (Unit, usize) {
    let Kind::Boundary(factory) = &nodes[chain[at]].kind else {
        unreachable!("called at a boundary");
    };
    let run = steps(nodes, chain, at + 1);
    let after = at + 1 + run.len();
    let (source, relay, up) = match source {
        Some((UpSource::Iter(iter, name), attributes)) => (Some((iter, name)), None, attributes),
        Some((UpSource::Relay(relay), attributes)) => (None, Some(relay), attributes),
        None => (None, None, Attributes::new()),
    };
    let next = chain.get(after).map(|&i| &nodes[i].kind);
    // An operator that leads runs in a fused source, so it may be relayed;
    // it cannot run inside a folding sink.
    if let Some(Kind::Boundary(_)) = next {
        let plan = BoundaryPlan {
            factory: Arc::clone(factory),
            capacity: receiver_buffer(nodes, chain, at + 1),
            source,
            sink: None,
            halves: (up, Attributes::new()),
            relay,
            relayed: true,
        };
        return (Unit::Boundary(plan), at);
    }
    let down = merged(nodes, &chain[at + 1..=after.min(chain.len() - 1)]);
    let (sink, capacity, last) = match next {
        Some(Kind::Consumer(consumer)) if !any_leads(&run) => {
            // Named after the operators, if any (as operators into a
            // folding sink are), else after the sink.
            let named = if run.is_empty() { after } else { after - 1 };
            let name = joined(nodes, &chain[at + 1..=named]);
            let sink = (stepped(&run, consumer), Arc::from(name), chain[after]);
            (Some(sink), receiver_buffer(nodes, chain, after), after)
        }
        _ => (None, receiver_buffer(nodes, chain, at + 1), at),
    };
    let down = if sink.is_some() {
        down
    } else {
        Attributes::new()
    };
    let plan = BoundaryPlan {
        factory: Arc::clone(factory),
        capacity,
        source,
        sink,
        halves: (up, down),
        relay,
        relayed: false,
    };
    (Unit::Boundary(plan), last)
}
