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
use crate::fusion::{ConsumerNode, IterNode, StepNode, any_leads};
use crate::plan::graph::{Fuses, Kind, Node};
use crate::stage::{Attributes, DEFAULT_INPUT_BUFFER, stage_attributes};

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

/// `a.b.c`: the names of fused nodes, in order.
fn joined(nodes: &[Node], chain: &[usize]) -> String {
    let names: Vec<String> = chain.iter().map(|&i| nodes[i].name()).collect();
    names.join(".")
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
pub(super) fn units(nodes: &[Node], chain: &[usize], fusion: bool) -> Vec<(Unit, usize, usize)> {
    let mut units = Vec::new();
    let mut at = 0;
    let mut relayed = false;
    while at < chain.len() {
        let (unit, last) = if !fusion {
            (plain(nodes, chain, at), at)
        } else if relayed {
            relay(nodes, chain, at)
        } else {
            fused(nodes, chain, at)
        };
        relayed = matches!(&unit, Unit::Boundary(b) if b.relayed);
        units.push((unit, at, last));
        at = last + 1;
    }
    units
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
            values: vec![chain[at]],
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
/// its last node.
fn fused(nodes: &[Node], chain: &[usize], at: usize) -> (Unit, usize) {
    let node = &nodes[chain[at]];
    let run = steps(nodes, chain, at + 1);
    let after = at + 1 + run.len();
    let next = chain.get(after).map(|&i| &nodes[i].kind);
    // **Flatten into folding sink.** A `flat_map_concat` (or `flatten`),
    // simple operators, then a folding sink: one sink stage that asks
    // upstream for one element at a time and runs each inner source
    // straight into the sink's consumer, the operators inside it. An
    // inner source that fuses into an iterator is drained in batches;
    // any other runs as the flattening stage would run it (sub-island or
    // its own stream) and feeds the consumer as its elements come. A
    // framing stage (`Framing::delimiter`, ...) fuses the same way: it
    // cuts each chunk into frames and feeds them to the consumer.
    if let Some(Fuses::Flatten(flatten)) = &node.fuses
        && let Some(Kind::Consumer(consumer)) = next
        && !any_leads(&run)
    {
        let stage = flatten.with_consumer(&*stepped(&run, consumer));
        let name = joined(nodes, &chain[at..after]);
        let unit = Unit::Stage {
            attributes: stage_attributes(
                &*stage,
                &merged(nodes, &chain[at..=after]).with_name(name),
            ),
            stage,
            values: vec![chain[after]],
        };
        return (unit, after);
    }
    // **Iterator into splitting stage.** An iterator source and simple
    // operators (fused into it as adapters) right before `group_by`,
    // `split_when` or `split_after`: the splitting stage takes its
    // elements from the iterator itself, one per element it routes (as
    // many as it would pull), with no port and no interpreter event per
    // element.
    if let Kind::Iter(iter) = &node.kind
        && let Some(&split) = chain.get(after)
        && let Some(Fuses::Split(splitter)) = &nodes[split].fuses
    {
        let name = joined(nodes, &chain[at..=after]);
        let stage = splitter.after_iter(&*adapted(iter, &run));
        let unit = Unit::Stage {
            attributes: stage_attributes(
                &*stage,
                &merged(nodes, &chain[at..=after]).with_name(name),
            ),
            stage,
            values: vec![split],
        };
        return (unit, after);
    }
    match (&node.kind, next) {
        // **Iterator into folding sink.** An iterator source, simple
        // operators (fused into it as adapters), then a folding sink: one
        // port-less stage that drives the iterator into the sink in a
        // loop, a budget of elements per actor message.
        (Kind::Iter(iter), Some(Kind::Consumer(consumer))) => {
            let name = joined(nodes, &chain[at..=after]);
            let stage = consumer.after_iter(&*adapted(iter, &run));
            let unit = Unit::Stage {
                attributes: stage_attributes(
                    &*stage,
                    &merged(nodes, &chain[at..=after]).with_name(name),
                ),
                stage,
                values: vec![chain[after]],
            };
            (unit, after)
        }
        // **Iterator into boundary.** An iterator source and simple
        // operators right before an async boundary run inside the
        // boundary's upstream half (a loop into its batch, no ports).
        (Kind::Iter(iter), Some(Kind::Boundary(_))) => {
            let name = joined(nodes, &chain[at..after]);
            let source = UpSource::Iter(adapted(iter, &run), Arc::from(name));
            boundary(
                nodes,
                chain,
                after,
                Some((source, merged(nodes, &chain[at..after]))),
            )
        }
        // **Fused iterator.** Simple operators after an iterator source
        // become adapters of the iterator: one source stage, one indirect
        // call per operator per batch.
        (Kind::Iter(iter), _) if !run.is_empty() => {
            let name = joined(nodes, &chain[at..after]);
            let stage = adapted(iter, &run).stage();
            let unit = Unit::Stage {
                attributes: stage_attributes(
                    &*stage,
                    &merged(nodes, &chain[at..after]).with_name(name),
                ),
                stage,
                values: vec![chain[at]],
            };
            (unit, after - 1)
        }
        // **Host into folding sink.** A source that can host a folding
        // sink (`Source::actor_ref`), simple operators, then a folding
        // sink: one stage, the operators run inside the sink's consumer.
        (Kind::Host(_, host), Some(Kind::Consumer(consumer))) if !any_leads(&run) => {
            let consumer = stepped(&run, consumer);
            let stage = host.with_consumer(&node.full_attributes(), &*consumer);
            let name = joined(nodes, &chain[at..=after]);
            let unit = Unit::Stage {
                attributes: stage_attributes(
                    &*stage,
                    &merged(nodes, &chain[at..=after]).with_name(name),
                ),
                stage,
                values: vec![chain[at], chain[after]],
            };
            (unit, after)
        }
        (Kind::Boundary(_), _) => boundary(nodes, chain, at, None),
        // **Operators into folding sink.** Simple operators right before a
        // folding sink run inside the sink's consumer (one sink stage,
        // named after the operators).
        (Kind::Step(first), _) => {
            let mut run = run;
            run.insert(0, first);
            let start = at;
            if let Some(Kind::Consumer(consumer)) = next
                && !any_leads(&run)
            {
                let stage = stepped(&run, consumer).stage();
                let sink = &nodes[chain[after]];
                // Named after the operators: what fails in it is most
                // likely theirs, and a named operator keeps its name.
                let name = joined(nodes, &chain[start..after]);
                let unit = Unit::Stage {
                    attributes: stage_attributes(
                        &*stage,
                        &merged(nodes, &chain[start..=after])
                            .and(&sink.attributes)
                            .with_name(name),
                    ),
                    stage,
                    values: vec![chain[after]],
                };
                return (unit, after);
            }
            // **Operator run.** Two or more simple operators in a row
            // run as one flow stage, up to one that leads (`scan`, which
            // then runs as its own stage).
            run.truncate(
                run.iter()
                    .position(|step| step.leads())
                    .unwrap_or(run.len()),
            );
            if run.len() < 2 {
                return (plain(nodes, chain, at), at);
            }
            let end = start + run.len() - 1;
            let mut cont = None;
            for step in run.iter().rev() {
                cont = Some(step.before(cont));
            }
            let head = run[0].head(cont.expect("a run has steps"));
            let stage = run[run.len() - 1].run_stage(head);
            let name = joined(nodes, &chain[start..=end]);
            let unit = Unit::Stage {
                attributes: stage_attributes(
                    &*stage,
                    &merged(nodes, &chain[start..=end]).with_name(name),
                ),
                stage,
                values: vec![chain[start]],
            };
            (unit, end)
        }
        _ => (plain(nodes, chain, at), at),
    }
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
