//! From a plan (see `crate::plan`) to running islands.

use crate::sync::Arc;
use std::any::Any;

use weir_actor::{DispatcherKind, TaskHandle};

use super::counters::Counters;
use super::island::Island;
use super::task::{IslandTask, TaskInbox};
use crate::error::{ErrorKind, MaterializeError, StreamError};
use crate::fusion::{IterNode, PullResult};
use crate::materializer::Materializer;
use crate::plan::{Driver, Half, IslandPlan, Made, Plan, PlannedStage, TaskPlan};
use crate::snapshot::Inspect;
use crate::stage::core::{Conn, Core, Handler, Host, Ports, StageMeta};
use crate::stage::{
    Attributes, ErasedStage, GraphStageLogic, IslandRef, MatContext, Name, SlotKind,
};

/// Each node's materialized value, in node order, and why the stream
/// could not start, if it could not.
pub(crate) type Materialized = (Vec<Option<Box<dyn Any + Send>>>, Option<MaterializeError>);

/// Run a plan of a graph of `nodes` nodes by its driver
/// ([`Plan::driver`]): pulled by its sink, one fused pool task
/// (`run_as_task`), or islands, built here and each spawned as a task of
/// the pool. Returns each node's materialized
/// value (`()` for the nodes fused away).
///
/// When an island cannot be spawned (the system has terminated), the
/// stream does not run: the islands are still built (so every
/// materialized value exists) and torn down at once, which fails every
/// sink with `AbruptTermination`; the islands already spawned are aborted.
pub(crate) fn materialize(plan: &Plan, nodes: usize, materializer: &Materializer) -> Materialized {
    let mut values: Vec<Option<Box<dyn Any + Send>>> = (0..nodes).map(|_| None).collect();
    match plan.driver() {
        Driver::Pulled(pulled) => {
            // No island: the sink runs the fused source itself.
            let value = pulled.pull.run(
                &*pulled.iter,
                Arc::clone(&pulled.name),
                pulled.attributes.clone(),
            );
            values[pulled.slot] = Some(Box::new(PullResult(value)));
            return (fill_units(values), None);
        }
        Driver::Task(task) => return run_as_task(&task, values, materializer),
        Driver::Islands => {}
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
    // Each island built on its inbox, then spawned as a task: one vector,
    // and one buffer for the stages' materialized values, for the whole graph.
    let mut built: Vec<(Island, Arc<TaskInbox>, DispatcherKind)> =
        Vec::with_capacity(plan.islands.len());
    let mut mats = Vec::new();
    for (i, island) in plan.islands.iter().enumerate() {
        let first = island.stages.iter().find_map(|p| match &p.made {
            Made::Stage(stage) => Some(p.attributes.name().unwrap_or(stage.name())),
            Made::Up(_) | Made::Down(_) => None,
        });
        let inbox = Arc::new(TaskInbox::new(system.clone(), stream, i, first));
        let host = Host {
            island: IslandRef::new(inbox.clone(), system.clone()),
            system: system.clone(),
            fusion: materializer.fusion(),
        };
        let mut built_island = build_island(island, &mut halves, &host, &mut values, &mut mats);
        if materializer.stage_counters() {
            let stages = built_island.core.stages.len();
            built_island.counters = Some(Box::new(Counters::new(stages)));
        }
        built.push((built_island, inbox, island_dispatcher(island)));
    }
    let failure = spawn_islands(built, materializer);
    (fill_units(values), failure)
}

/// Spawn each island as a task on its dispatcher, registered among the
/// running streams. If one cannot start (the system is terminating; a
/// dispatcher the builder did not declare),
/// the stream does not run: the islands spawned are aborted and the rest
/// torn down, which fails every sink with `AbruptTermination`.
fn spawn_islands(
    built: Vec<(Island, Arc<TaskInbox>, DispatcherKind)>,
    materializer: &Materializer,
) -> Option<MaterializeError> {
    let system = materializer.system();
    let mut spawned: Vec<TaskHandle> = Vec::with_capacity(built.len());
    let mut failure: Option<MaterializeError> = None;
    for (island, inbox, dispatcher) in built {
        let mut island = Some(island);
        if failure.is_none() {
            let registration = materializer.reserve_task();
            let started = system.spawn_task_on(dispatcher, |handle| {
                registration.attach(handle, Arc::clone(&inbox) as Arc<dyn Inspect>);
                let mut island = island.take().expect("spawned once");
                island.registration = Some(registration);
                IslandTask::new(island, inbox)
            });
            match started {
                Ok(handle) => spawned.push(handle),
                Err(error) => failure = Some(error.into()),
            }
        }
        if let Some(mut island) = island {
            island.abort(&StreamError::from_kind(ErrorKind::AbruptTermination));
        }
    }
    if failure.is_some() {
        for task in spawned {
            task.abort();
        }
    }
    failure
}

/// Run a graph that is one stage able to run as a pool task (see
/// `crate::fusion::TaskStage`) as that task.
fn run_as_task(
    plan: &TaskPlan<'_>,
    mut values: Vec<Option<Box<dyn Any + Send>>>,
    materializer: &Materializer,
) -> Materialized {
    let name = plan
        .planned
        .attributes
        .shared_name()
        .unwrap_or(Name::Static(plan.stage.name()));
    let registration = materializer.reserve_task();
    let (mat, spawned) = plan.task.spawn(name, registration, materializer);
    values[plan.slot] = Some(mat);
    (fill_units(values), spawned.err().map(Into::into))
}

/// The nodes fused away materialize `()`.
fn fill_units(mut values: Vec<Option<Box<dyn Any + Send>>>) -> Vec<Option<Box<dyn Any + Send>>> {
    for value in &mut values {
        value.get_or_insert_with(|| Box::new(()));
    }
    values
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
        let Created {
            logic,
            name,
            attributes,
            ports: (ins, outs),
            outlets: outlet_slots,
        } = create(
            planned,
            index32,
            halves,
            host,
            mats,
            &mut handlers,
            &mut on_finish,
        );
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
            gauge: None,
        });
        logics.push(logic);
    }
    let conns = connect(plan, &ports, &slots, &mut links);
    debug_assert!(
        links.iter().all(|&c| c != u32::MAX),
        "a runnable graph has every port connected"
    );
    Island {
        logics,
        active: 0,
        starting: 0,
        registration: None,
        counters: None,
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

/// A planned stage's logic, as its stage (or its boundary half) makes it.
struct Created<'p> {
    logic: Box<dyn GraphStageLogic>,
    name: Arc<str>,
    attributes: Attributes,
    ports: (u16, u16),
    outlets: Outlets<'p>,
}

/// Make the logic of `planned`, stage `index` of its island, its values
/// left in `mats`.
fn create<'p>(
    planned: &'p PlannedStage,
    index: u32,
    halves: &mut [(Option<Half>, Option<Half>)],
    host: &Host,
    mats: &mut Vec<Box<dyn Any + Send>>,
    handlers: &mut Vec<Option<Handler>>,
    on_finish: &mut Vec<Box<dyn FnOnce() + Send>>,
) -> Created<'p> {
    match &planned.made {
        Made::Stage(stage) => {
            let mut cx = MatContext {
                attributes: &planned.attributes,
                host,
                stage: index,
                handlers,
                on_finish,
            };
            Created {
                logic: stage.create(&mut cx, mats),
                name: planned.attributes.name().unwrap_or(stage.name()).into(),
                attributes: planned.attributes.clone(),
                ports: stage.ports(),
                outlets: Outlets::Stage(&**stage),
            }
        }
        Made::Up(b) | Made::Down(b) => {
            let half = match planned.made {
                Made::Up(_) => halves[*b].0.take(),
                _ => halves[*b].1.take(),
            };
            let half = half.expect("each half is placed once");
            mats.extend(half.mats);
            Created {
                logic: half.logic,
                name: half.name,
                attributes: Attributes::new(),
                ports: half.ports,
                outlets: Outlets::Half(half.slot),
            }
        }
    }
}

/// The island's connections, each outlet and inlet in `links` pointing at
/// its connection.
fn connect(
    plan: &IslandPlan,
    ports: &[Ports],
    slots: &[Option<SlotKind>],
    links: &mut [u32],
) -> Vec<Conn> {
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
    conns
}

/// Where a planned stage's outlet slot kinds come from.
#[derive(Clone, Copy)]
enum Outlets<'a> {
    Stage(&'a dyn ErasedStage),
    /// A boundary half: one kind for all its outlets.
    Half(Option<SlotKind>),
}

/// The first dispatcher a stage of the island asks for (the shared pool if none does).
fn island_dispatcher(island: &IslandPlan) -> DispatcherKind {
    island
        .stages
        .iter()
        .find_map(|p| p.attributes.dispatcher())
        .unwrap_or_default()
}
