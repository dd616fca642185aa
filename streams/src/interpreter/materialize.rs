//! From a plan (see `crate::plan`) to running islands.

use crate::sync::Arc;
use std::any::Any;

use weir_actor::{ActorRef, ActorSystem, FunctionRef, Props};

use super::actor::IslandActor;
use super::island::Island;
use crate::error::{ErrorKind, MaterializeError, StreamError};
use crate::fusion::{IterNode, PullResult, TaskStage};
use crate::materializer::Materializer;
use crate::plan::{Half, IslandPlan, Made, Plan, PlannedStage};
use crate::stage::core::{Conn, Core, Host, Ports, StageMeta};
use crate::stage::{Attributes, ErasedStage, IslandMsg, MatContext, Name, SlotKind};

/// Each node's materialized value, in node order, and why the stream
/// could not start, if it could not.
pub(crate) type Materialized = (Vec<Option<Box<dyn Any + Send>>>, Option<MaterializeError>);

/// Run a plan of a graph of `nodes` nodes: spawn one actor per island,
/// build the islands, start them (a graph that is one fused loop runs as
/// a pool task instead: `run_as_task`). Returns each node's materialized
/// value (`()` for the nodes fused away).
///
/// When an island's actor cannot be spawned (the system has terminated),
/// the stream does not run: the islands are still built (so every
/// materialized value exists) and torn down at once, which fails every
/// sink with `AbruptTermination`; the actors already spawned stop.
pub(crate) fn materialize(plan: &Plan, nodes: usize, materializer: &Materializer) -> Materialized {
    let mut values: Vec<Option<Box<dyn Any + Send>>> = (0..nodes).map(|_| None).collect();
    if let Some(pulled) = &plan.pulled {
        // No island: the sink runs the fused source itself.
        let value = pulled.pull.run(
            &*pulled.iter,
            Arc::clone(&pulled.name),
            pulled.attributes.clone(),
        );
        values[pulled.slot] = Some(Box::new(PullResult(value)));
        return (fill_units(values), None);
    }
    if let Some(done) = run_as_task(plan, nodes, materializer) {
        return done;
    }
    let mut halves: Vec<(Option<Half>, Option<Half>)> = Vec::with_capacity(plan.boundaries.len());
    // The downstream end of a relayed boundary, for the next one.
    let mut relayed: Option<Arc<dyn IterNode>> = None;
    for b in &plan.boundaries {
        let through = b.relay.as_ref().map(|relay| {
            let leaf = relayed.take().expect("a relay follows a relayed boundary");
            (relay.adapt(&leaf), &relay.name)
        });
        let source = match &through {
            Some((iter, name)) => Some((&**iter, *name)),
            None => b.source.as_ref().map(|(iter, name)| (&**iter, name)),
        };
        if b.relayed {
            let (up, leaf) = b.factory.create_relay(b.capacity, source);
            relayed = Some(leaf);
            halves.push((Some(up), None));
        } else {
            let sink = b
                .sink
                .as_ref()
                .map(|(consumer, name, _)| (&**consumer, name));
            let (up, down) = b.factory.create(b.capacity, source, sink);
            halves.push((Some(up), Some(down)));
        }
    }

    let stream = materializer.next_stream_id();
    let system = materializer.system();
    let mut failure: Option<MaterializeError> = None;
    // Each island's actor, then the island built on it: one vector, and
    // one buffer for the stages' materialized values, for the whole graph.
    let mut built: Vec<(Island, Host)> = Vec::with_capacity(plan.islands.len());
    let mut mats = Vec::new();
    for (i, island) in plan.islands.iter().enumerate() {
        let first = island.stages.iter().find_map(|p| match &p.made {
            Made::Stage(stage) => Some(p.attributes.name().unwrap_or(stage.name())),
            Made::Up(_) | Made::Down(_) => None,
        });
        let name = actor_name(stream, i, first);
        let props = Props::new(IslandActor::default).with_dispatcher(island_dispatcher(island));
        let actor = match system.spawn_system_actor(props, &name) {
            Ok(actor) => actor,
            Err(error) => {
                failure.get_or_insert(error.into());
                stopped_ref(system, &name)
            }
        };
        let host = Host {
            island: actor,
            system: system.clone(),
            fusion: materializer.fusion(),
        };
        let island = build_island(island, &mut halves, &host, &mut values, &mut mats);
        built.push((island, host));
    }
    if failure.is_some() {
        let error = StreamError::from_kind(ErrorKind::AbruptTermination);
        for (mut island, host) in built {
            host.island.stop();
            island.abort(&error);
        }
    } else {
        for (mut island, host) in built {
            island.registration = Some(materializer.register(&host.island.handle()));
            host.island.tell(IslandMsg::Start(Box::new(island)));
        }
    }
    (fill_units(values), failure)
}

/// Run a graph that is one stage able to run as a pool task (see
/// `crate::fusion::TaskStage`) as that task, with no island actor; `None`
/// for any other graph (see [`as_task`]), or when the registry of running
/// streams can no longer stop a task (the island path runs those).
fn run_as_task(plan: &Plan, nodes: usize, materializer: &Materializer) -> Option<Materialized> {
    let (planned, stage, task, slot) = as_task(plan)?;
    let name = planned
        .attributes
        .shared_name()
        .unwrap_or(Name::Static(stage.name()));
    let registration = materializer.reserve_task()?;
    let (mat, spawned) = task.spawn(name, registration, materializer);
    let mut values: Vec<Option<Box<dyn Any + Send>>> = (0..nodes).map(|_| None).collect();
    values[slot] = Some(mat);
    Some((fill_units(values), spawned.err().map(Into::into)))
}

/// The one stage of a plan that runs as a pool task, with its task form
/// and its value slot: a plan of one island of one stage that can run as
/// a task, with no boundary, no dispatcher of its own and one
/// materialized value. The one place this is decided (running and
/// describing a plan both ask here).
pub(crate) fn as_task(
    plan: &Plan,
) -> Option<(&PlannedStage, &dyn ErasedStage, &dyn TaskStage, usize)> {
    let [island] = &plan.islands[..] else {
        return None;
    };
    let [planned] = &island.stages[..] else {
        return None;
    };
    let Made::Stage(stage) = &planned.made else {
        return None;
    };
    let task = stage.as_task()?;
    if !plan.boundaries.is_empty() || planned.attributes.dispatcher().is_some() {
        return None;
    }
    // One stage, one materialized value.
    let [slot] = planned.values[..] else {
        return None;
    };
    Some((planned, &**stage, task, slot))
}

/// The nodes fused away materialize `()`.
fn fill_units(mut values: Vec<Option<Box<dyn Any + Send>>>) -> Vec<Option<Box<dyn Any + Send>>> {
    for value in &mut values {
        value.get_or_insert_with(|| Box::new(()));
    }
    values
}

/// A reference for an island whose actor could not be spawned: already
/// stopped, so what its callbacks and timers send becomes a dead letter.
pub(crate) fn stopped_ref(system: &ActorSystem, name: &str) -> ActorRef<IslandMsg> {
    // `name` comes from `actor_name`, which only makes valid names.
    let function = FunctionRef::new(system, name, Err)
        .or_else(|_| FunctionRef::new(system, "stream", Err))
        .expect("`stream` is a valid actor name");
    function.stop();
    function.actor_ref()
}

pub(crate) fn build_island(
    plan: &IslandPlan,
    halves: &mut [(Option<Half>, Option<Half>)],
    host: &Host,
    values: &mut [Option<Box<dyn Any + Send>>],
    mats: &mut Vec<Box<dyn Any + Send>>,
) -> Island {
    let count = plan.stages.len();
    let mut logics = Vec::with_capacity(count);
    let mut stages = Vec::with_capacity(count);
    let mut ports = Vec::with_capacity(count);
    let mut links = Vec::new();
    // Each outlet's slot kind, at its place in `links` (inlets hold `None`).
    let mut slots: Vec<Option<SlotKind>> = Vec::new();
    mats.clear();
    for (index, planned) in plan.stages.iter().enumerate() {
        let index32 = u32::try_from(index).expect("fewer than 2^32 stages");
        let mut handlers = Vec::new();
        let mut on_finish = Vec::new();
        let (logic, name, attributes, (ins, outs), outlet_slots) = match &planned.made {
            Made::Stage(stage) => {
                let mut cx = MatContext {
                    attributes: &planned.attributes,
                    host,
                    stage: index32,
                    handlers: &mut handlers,
                    on_finish: &mut on_finish,
                };
                let logic = stage.create(&mut cx, mats);
                let name: Arc<str> = planned.attributes.name().unwrap_or(stage.name()).into();
                let ports = stage.ports();
                let outlet_slots = Outlets::Stage(&**stage);
                (logic, name, planned.attributes.clone(), ports, outlet_slots)
            }
            Made::Up(b) | Made::Down(b) => {
                let half = match planned.made {
                    Made::Up(_) => halves[*b].0.take(),
                    _ => halves[*b].1.take(),
                };
                let half = half.expect("each half is placed once");
                mats.extend(half.mats);
                let outlet_slots = Outlets::Half(half.slot);
                (
                    half.logic,
                    half.name,
                    Attributes::new(),
                    half.ports,
                    outlet_slots,
                )
            }
        };
        debug_assert_eq!(
            mats.len(),
            planned.values.len(),
            "one value per planned slot"
        );
        for (slot, value) in planned.values.iter().zip(mats.drain(..)) {
            values[*slot] = Some(value);
        }
        mats.clear();
        ports.push(Ports {
            base: u32::try_from(links.len()).expect("fewer than 2^32 ports"),
            ins,
            outs,
        });
        links.extend(std::iter::repeat_n(
            u32::MAX,
            usize::from(ins) + usize::from(outs),
        ));
        slots.extend(std::iter::repeat_n(None, usize::from(ins)));
        slots.extend((0..outs).map(|p| match outlet_slots {
            Outlets::Stage(stage) => Some(stage.outlet_slot(p)),
            Outlets::Half(slot) => slot,
        }));
        stages.push(StageMeta {
            name,
            attributes,
            open_ports: ins + outs,
            keep_going: false,
            finished: false,
            handlers,
            timers: Vec::new(),
            on_finish,
            idle_requested: false,
        });
        logics.push(logic);
    }
    let mut conns = Vec::with_capacity(plan.conns.len());
    for &((up, up_port), (down, down_port)) in &plan.conns {
        let c = u32::try_from(conns.len()).expect("fewer than 2^32 connections");
        let (u, d) = (ports[up as usize], ports[down as usize]);
        let outlet = u.base as usize + usize::from(u.ins) + usize::from(up_port);
        let kind = slots[outlet].expect("an outlet has a slot");
        conns.push(Conn::new(up, up_port, down, down_port, kind));
        links[outlet] = c;
        links[d.base as usize + usize::from(down_port)] = c;
    }
    debug_assert!(
        links.iter().all(|&c| c != u32::MAX),
        "a runnable graph has every port connected"
    );
    Island {
        logics,
        active: 0,
        starting: 0,
        registration: None,
        core: Core {
            events: std::collections::VecDeque::with_capacity(conns.len() * 2 + 4),
            chased: None,
            conns,
            ports,
            links,
            live_stages: stages.len(),
            recheck: false,
            stages,
            host: host.clone(),
            timer_generation: 0,
            idle: Vec::new(),
        },
    }
}

/// Where a planned stage's outlet slot kinds come from.
#[derive(Clone, Copy)]
enum Outlets<'a> {
    Stage(&'a dyn ErasedStage),
    /// A boundary half: one kind for all its outlets.
    Half(Option<SlotKind>),
}

/// The first dispatcher a stage of the island asks for (the shared pool if none does).
fn island_dispatcher(island: &IslandPlan) -> weir_actor::DispatcherKind {
    island
        .stages
        .iter()
        .find_map(|p| p.attributes.dispatcher())
        .unwrap_or_default()
}

/// The longest island actor name: `stream-`, two numbers of at most 20
/// digits, two `-` and 40 characters of the stage name.
const ACTOR_NAME_MAX: usize = 7 + 20 + 1 + 20 + 1 + 40;

/// An island actor's name, made on the stack: the actor system copies it
/// once, into the name the actor's path and its parent share.
struct ActorName {
    bytes: [u8; ACTOR_NAME_MAX],
    len: usize,
}

impl std::ops::Deref for ActorName {
    type Target = str;

    fn deref(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).expect("actor names are ASCII")
    }
}

/// `stream-<n>-<island>-<first stage>`, with the stage name reduced to
/// characters actor names accept.
fn actor_name(stream: u64, island: usize, first: Option<&str>) -> ActorName {
    let mut name = ActorName {
        bytes: [0u8; ACTOR_NAME_MAX],
        len: 0,
    };
    name.push(b"stream-");
    name.push_decimal(stream);
    name.push(b"-");
    name.push_decimal(island as u64);
    if let Some(first) = first {
        name.push(b"-");
        for c in crate::stage::name_chars(first).take(40) {
            debug_assert!(c.is_ascii(), "`name_chars` maps to ASCII");
            name.push(&[c as u8]);
        }
    }
    name
}

impl ActorName {
    /// Append `bytes` (ASCII); [`ACTOR_NAME_MAX`] leaves room for the longest name.
    fn push(&mut self, bytes: &[u8]) {
        self.bytes[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Append `n` in decimal (no `fmt` machinery: this is on every run).
    fn push_decimal(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[at..]);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::actor_name;

    proptest! {
        /// Whatever the stream, island and stage, the name fits its
        /// buffer whole and is a valid actor name.
        #[test]
        fn every_island_actor_name_is_whole_and_valid(
            stream in any::<u64>(),
            island in any::<usize>(),
            label in proptest::option::of(any::<String>()),
        ) {
            let name = actor_name(stream, island, label.as_deref());
            let mut expected = format!("stream-{stream}-{island}");
            if let Some(label) = &label {
                expected.push('-');
                expected.extend(crate::stage::name_chars(label).take(40));
            }
            prop_assert_eq!(&*name, expected.as_str());
            prop_assert_eq!(weir_actor::validate_name(&name), Ok(()));
        }
    }
}
