//! Kill switches: stop a running stream from outside. The members of a
//! shared switch are kept in `kill_switch/registry.rs`.

pub(crate) mod registry;

use registry::{Joined, Registry};

use crate::blueprint::Flow;
use crate::error::StreamError;
use crate::stage::{
    AsyncCallback, FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort,
    StageContext, StageResult,
};
use crate::sync::Arc;

#[derive(Clone)]
enum Kill {
    Shutdown,
    Abort(StreamError),
}

/// Makes kill switches: [`KillSwitches::single`] for one stream,
/// [`KillSwitches::shared`] for many.
///
/// # Examples
///
/// ```
/// use weir_streams::prelude::*;
/// use weir_streams::KillSwitches;
///
/// let system = weir_actor::ActorSystem::new("kill").unwrap();
/// let materializer = Materializer::new(&system);
/// let (switch, done) = Source::repeat(1u8)
///     .via_mat(KillSwitches::single(), Keep::right)
///     .to_mat(Sink::ignore(), Keep::both)
///     .run(&materializer);
/// switch.shutdown();
/// assert_eq!(done.wait(), Ok(()));
/// system.terminate().wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct KillSwitches;

impl KillSwitches {
    /// A flow that materializes a [`UniqueKillSwitch`] controlling this one run.
    pub fn single<T: Send + 'static>() -> Flow<T, T, UniqueKillSwitch> {
        Flow::from_graph(KillStage::<T> {
            shared: None,
            _t: std::marker::PhantomData,
        })
    }

    /// A switch that controls every stream its [`SharedKillSwitch::flow`] is part of.
    pub fn shared(name: &str) -> SharedKillSwitch {
        SharedKillSwitch {
            name: name.into(),
            registry: Arc::new(Registry::new()),
        }
    }
}

/// Controls one materialized stream: `shutdown` completes downstream and
/// cancels upstream; `abort` fails downstream and cancels upstream.
/// Calls after the first, or after the stream ended, do nothing.
#[derive(Clone, Debug)]
pub struct UniqueKillSwitch {
    callback: AsyncCallback<Kill>,
}

impl UniqueKillSwitch {
    /// Complete downstream, cancel upstream.
    pub fn shutdown(&self) {
        self.callback.invoke(Kill::Shutdown);
    }

    /// Fail downstream with `error`, cancel upstream.
    pub fn abort(&self, error: StreamError) {
        self.callback.invoke(Kill::Abort(error));
    }
}

/// A kill switch for any number of streams, materialized before or after
/// it fires (a stream that starts after it fired stops at once). It keeps
/// a way to reach each stream under it only while that stream runs.
#[derive(Clone)]
pub struct SharedKillSwitch {
    name: Arc<str>,
    registry: Arc<Registry<AsyncCallback<Kill>, Kill>>,
}

impl SharedKillSwitch {
    /// A flow that puts streams under this switch.
    pub fn flow<T: Send + 'static>(&self) -> Flow<T, T> {
        Flow::from_graph(KillStage::<T> {
            shared: Some(self.clone()),
            _t: std::marker::PhantomData,
        })
        .map_materialized_value(|_| ())
    }

    /// Complete every stream under the switch.
    pub fn shutdown(&self) {
        self.fire(Kill::Shutdown);
    }

    /// Fail every stream under the switch with `error`.
    pub fn abort(&self, error: StreamError) {
        self.fire(Kill::Abort(error));
    }

    fn fire(&self, kill: Kill) {
        for stream in self.registry.fire(&kill) {
            stream.invoke(kill.clone());
        }
    }
}

impl std::fmt::Debug for SharedKillSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedKillSwitch")
            .field("name", &self.name)
            .field("running_streams", &self.registry.len())
            .field("fired", &self.registry.has_fired())
            .finish()
    }
}

impl std::fmt::Debug for Kill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kill::Shutdown => f.write_str("Shutdown"),
            Kill::Abort(e) => write!(f, "Abort({e})"),
        }
    }
}

struct KillStage<T> {
    shared: Option<SharedKillSwitch>,
    _t: std::marker::PhantomData<fn(T)>,
}

struct KillLogic<T> {
    shape: FlowShape<T, T>,
    membership: Option<Membership>,
}

/// A stream's place under a shared switch: it leaves when the stage
/// stops (or, should it never start, when its logic is dropped).
struct Membership {
    registry: Arc<Registry<AsyncCallback<Kill>, Kill>>,
    key: u64,
}

impl Drop for Membership {
    fn drop(&mut self) {
        self.registry.leave(self.key);
    }
}

impl<T: Send + 'static> GraphStage for KillStage<T> {
    type Shape = FlowShape<T, T>;
    type Mat = UniqueKillSwitch;

    fn name(&self) -> &'static str {
        "kill_switch"
    }

    fn create_logic(
        &self,
        cx: &mut MatContext<'_>,
    ) -> (Box<dyn GraphStageLogic>, UniqueKillSwitch) {
        let callback = cx.async_callback(|_: &mut KillLogic<T>, kill: Kill, ctx| {
            match kill {
                Kill::Shutdown => ctx.complete_stage(),
                Kill::Abort(error) => ctx.fail_stage(error),
            }
            Ok(())
        });
        let membership =
            self.shared
                .as_ref()
                .and_then(|shared| match shared.registry.join(callback.clone()) {
                    Joined::Member(key) => Some(Membership {
                        registry: Arc::clone(&shared.registry),
                        key,
                    }),
                    Joined::Fired(kill) => {
                        callback.invoke(kill);
                        None
                    }
                });
        (
            Box::new(KillLogic::<T> {
                shape: FlowShape::new(),
                membership,
            }),
            UniqueKillSwitch { callback },
        )
    }
}

impl<T: Send + 'static> GraphStageLogic for KillLogic<T> {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let element = ctx.grab(self.shape.inlet)?;
        ctx.push(self.shape.out, element)
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }

    fn post_stop(&mut self) {
        self.membership = None;
    }
}
