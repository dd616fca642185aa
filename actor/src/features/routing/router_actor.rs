//! The router actor: it owns a pool's routees (their parent and supervisor)
//! or watches a group's, and handles the management messages. Routing
//! itself happens on the senders' threads (see [`super::RoutingTable`]).

use super::logic::Kind;
use super::{Op, RouterMsg, RoutingTable};
use crate::core::actor::{Actor, Props, Terminated};
use crate::core::actor_ref::{ActorRef, Envelope};
use crate::core::context::Context;
use crate::core::dead_letters::DeadLetterReason;
use crate::supervision::{Failure, SupervisorStrategy};
use crate::sync::Arc;

/// Makes one more routee, as a child of the router actor.
type SpawnRoutee<M> =
    Box<dyn Fn(&mut Context<RouterActor<M>>) -> Option<ActorRef<M>> + Send + Sync>;

/// What a pool router needs to make routees.
pub(super) struct PoolSpec<M: Send + 'static> {
    pub(super) spawn: SpawnRoutee<M>,
    pub(super) strategy: SupervisorStrategy,
}

pub(crate) struct RouterActor<M: Send + 'static> {
    pub(super) shared: Arc<RoutingTable<M>>,
    pub(super) pool: Option<Arc<PoolSpec<M>>>,
}

impl<M: Send + 'static> RouterActor<M> {
    pub(super) fn props(
        shared: Arc<RoutingTable<M>>,
        pool: Option<Arc<PoolSpec<M>>>,
    ) -> Props<Self> {
        Props::new(move || RouterActor {
            shared: shared.clone(),
            pool: pool.clone(),
        })
    }

    fn watch_all(&self, ctx: &mut Context<Self>) {
        for routee in self.shared.snapshot().refs.iter() {
            ctx.watch(routee);
        }
    }

    /// Grow or shrink a pool to `size` routees, but never below one (a
    /// pool resized to nothing would live on routing everything to dead
    /// letters). Removed routees get a poison pill: they finish what they
    /// were sent first.
    fn resize(&mut self, ctx: &mut Context<Self>, size: usize) {
        let Some(pool) = self.pool.clone() else {
            return;
        };
        let size = size.max(1);
        let mut refs = self.shared.snapshot().refs.clone();
        while refs.len() < size {
            let Some(routee) = (pool.spawn)(ctx) else {
                break;
            };
            ctx.watch(&routee);
            refs.push(routee);
        }
        let removed = refs.split_off(size.min(refs.len()));
        self.shared.publish(refs);
        for routee in removed {
            ctx.unwatch(&routee);
            routee.poison_pill();
        }
    }
}

impl<M: Send + 'static> Actor for RouterActor<M> {
    type Msg = RouterMsg<M>;

    fn pre_start(&mut self, ctx: &mut Context<Self>) {
        self.watch_all(ctx);
    }

    fn receive(&mut self, ctx: &mut Context<Self>, msg: RouterMsg<M>) {
        match msg.0 {
            Op::Route(msg) => {
                if let Err(msg) = self.shared.route(msg) {
                    ctx.system().event_stream().publish_dead_letter(
                        ctx.path(),
                        msg,
                        DeadLetterReason::NoRoutee,
                    );
                }
            }
            Op::WatchAll => self.watch_all(ctx),
            Op::Resize(size) => self.resize(ctx, size),
            Op::Adjust(delta) => {
                let size = self
                    .shared
                    .snapshot()
                    .refs
                    .len()
                    .saturating_add_signed(delta);
                self.resize(ctx, size);
            }
            Op::Add(routee) => {
                if self.pool.is_none() && !self.shared.snapshot().refs.contains(&routee) {
                    ctx.watch(&routee);
                    let mut refs = self.shared.snapshot().refs.clone();
                    refs.push(routee);
                    self.shared.publish(refs);
                }
            }
            Op::Remove(routee) => {
                if self.pool.is_none() {
                    ctx.unwatch(&routee);
                    self.shared.publish_without(|r| *r == routee);
                }
            }
            Op::Get(reply_to) => reply_to.tell(self.shared.snapshot().refs.clone()),
        }
    }

    fn on_terminated(&mut self, ctx: &mut Context<Self>, terminated: Terminated) {
        let gone = terminated.actor();
        if self.shared.publish_without(|r| r.handle() == *gone)
            && self.pool.is_some()
            && self.shared.snapshot().refs.is_empty()
        {
            // A pool whose last routee stopped (not resized away) has
            // nothing left to route to: it stops, as Akka's does.
            ctx.stop_self();
        }
    }

    /// Keep the routees (the same references) across a restart of the
    /// router itself; they are restarted with it, as kept children are.
    fn pre_restart(&mut self, _: &mut Context<Self>, _: &Failure) {}

    fn post_stop(&mut self, ctx: &mut Context<Self>) {
        // Senders see an empty router from now on: dead letters.
        self.shared.publish(Vec::new());
        // A balancing pool's routees are gone: what they shared is undelivered.
        if let Kind::Balancing(queue) = &self.shared.routing.kind {
            for envelope in queue.drain() {
                if let Envelope::Msg(msg, _) = envelope {
                    ctx.system().event_stream().publish_dead_letter(
                        ctx.path(),
                        msg,
                        DeadLetterReason::NoRoutee,
                    );
                }
            }
        }
    }

    fn supervisor_strategy(&self) -> SupervisorStrategy {
        self.pool
            .as_ref()
            .map(|p| p.strategy.clone())
            .unwrap_or_default()
    }
}
