//! The connection state machine against the Reactive Streams rules:
//! random scripts of push / pull / grab / complete / fail / cancel, with
//! the event loop run a step at a time in between, and the signals each
//! stage sees checked against the rules (numbers cite them).

use std::sync::OnceLock;

use proptest::prelude::*;

use super::*;
use crate::interpreter::island::Island;
use crate::stage::{InPort, Inlet, OutPort, Outlet};
use crate::sync::Mutex;

/// What the two stages saw, and what the script did, in order.
#[derive(Debug, Clone, PartialEq)]
enum Sig {
    /// Upstream's `on_pull`.
    OnPull,
    /// Upstream's `on_downstream_finish`.
    OnCancel,
    /// Downstream's `on_push`, with the element grabbed at once when the
    /// script says so.
    OnPush,
    OnComplete,
    OnFailure,
    /// The script: downstream cancelled.
    Cancelled,
}

type Log = Arc<Mutex<Vec<Sig>>>;

struct Up(Log);
struct Down(Log);

impl GraphStageLogic for Up {
    fn on_pull(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        self.0.lock().push(Sig::OnPull);
        Ok(())
    }
    fn on_downstream_finish(&mut self, _: OutPort, _: &mut StageContext<'_>) -> StageResult {
        self.0.lock().push(Sig::OnCancel);
        Ok(())
    }
}

impl GraphStageLogic for Down {
    fn on_push(&mut self, _: InPort, _: &mut StageContext<'_>) -> StageResult {
        self.0.lock().push(Sig::OnPush);
        Ok(())
    }
    fn on_upstream_finish(&mut self, _: InPort, _: &mut StageContext<'_>) -> StageResult {
        self.0.lock().push(Sig::OnComplete);
        Ok(())
    }
    fn on_upstream_failure(
        &mut self,
        _: InPort,
        _: StreamError,
        _: &mut StageContext<'_>,
    ) -> StageResult {
        self.0.lock().push(Sig::OnFailure);
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Pull,
    Push(u32),
    Grab,
    Complete,
    Fail,
    Cancel,
    /// Run one event of the island.
    Step,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Pull),
        3 => any::<u32>().prop_map(Op::Push),
        2 => Just(Op::Grab),
        1 => Just(Op::Complete),
        1 => Just(Op::Fail),
        1 => Just(Op::Cancel),
        6 => Just(Op::Step),
    ]
}

fn system() -> &'static ActorSystem {
    static SYSTEM: OnceLock<ActorSystem> = OnceLock::new();
    SYSTEM.get_or_init(|| ActorSystem::new("protocol-tests").expect("a valid name"))
}

fn meta(name: &str) -> StageMeta {
    StageMeta {
        name: name.into(),
        attributes: Attributes::new(),
        open_ports: 1,
        keep_going: false,
        finished: false,
        handlers: Vec::new(),
        timers: Vec::new(),
        on_finish: Vec::new(),
        idle_requested: false,
        gauge: None,
    }
}

/// Two started stages joined by one connection of `u32`.
fn island(log: &Log) -> Island {
    let system = system();
    Island {
        logics: vec![
            Box::new(Up(Arc::clone(log))),
            Box::new(Down(Arc::clone(log))),
        ],
        active: 0,
        starting: 2,
        registration: None,
        counters: None,
        core: Core {
            conns: vec![Conn::new(0, 0, 1, 0, SlotKind::of::<u32>())],
            events: VecDeque::new(),
            chased: None,
            stages: vec![meta("up"), meta("down")],
            // Stage 0 ("up") has outlet 0, stage 1 ("down") inlet 0: both
            // on connection 0.
            ports: vec![
                Ports {
                    base: 0,
                    ins: 0,
                    outs: 1,
                },
                Ports {
                    base: 1,
                    ins: 1,
                    outs: 0,
                },
            ],
            links: vec![0, 0],
            host: Host {
                island: crate::stage::IslandRef::new(
                    Arc::new(crate::stage::Closed),
                    system.clone(),
                ),
                system: system.clone(),
                fusion: true,
            },
            timer_generation: 0,
            live_stages: 2,
            recheck: false,
            idle: Vec::new(),
        },
    }
}

fn ctx(island: &mut Island, stage: usize) -> StageContext<'_> {
    StageContext::new(&mut island.core, stage)
}

const IN: Inlet<u32> = Inlet::new(0);
const OUT: Outlet<u32> = Outlet::new(0);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_connection_keeps_the_reactive_streams_rules(script in proptest::collection::vec(op(), 0..60)) {
        let log: Log = Arc::default();
        let mut island = island(&log);
        // What the script got accepted.
        let (mut pulls, mut pushed, mut grabbed) = (0usize, Vec::new(), Vec::new());
        let mut closed: Option<Sig> = None; // the first complete or fail, as downstream should see it
        let mut cancelled = false;
        let mut up_closed = false; // closed at all, before or after a cancel
        for op in script {
            match op {
                Op::Pull => {
                    if ctx(&mut island, 1).pull(IN).is_ok() {
                        prop_assert!(!cancelled, "3.6: no request after cancel");
                        pulls += 1;
                    }
                }
                Op::Push(x) => {
                    let demand = pulls > pushed.len();
                    let accepted = ctx(&mut island, 0).push(OUT, x).is_ok();
                    if accepted && !cancelled {
                        prop_assert!(demand, "1.1: a push needs demand");
                        prop_assert!(closed.is_none(), "1.7: no push after a terminal signal");
                        pushed.push(x);
                    }
                    if !demand && !cancelled {
                        prop_assert!(!accepted, "1.1: a push without demand is refused");
                    }
                }
                Op::Grab => {
                    if let Ok(x) = ctx(&mut island, 1).grab(IN) {
                        grabbed.push(x);
                    }
                }
                Op::Complete => {
                    ctx(&mut island, 0).complete(OUT);
                    up_closed = true;
                    if !cancelled {
                        closed.get_or_insert(Sig::OnComplete);
                    }
                }
                Op::Fail => {
                    ctx(&mut island, 0).fail(OUT, StreamError::msg("up failed"));
                    up_closed = true;
                    if !cancelled {
                        closed.get_or_insert(Sig::OnFailure);
                    }
                }
                Op::Cancel => {
                    if !cancelled {
                        log.lock().push(Sig::Cancelled);
                    }
                    ctx(&mut island, 1).cancel(IN);
                    cancelled = true;
                }
                Op::Step => {
                    island.run(1);
                }
            }
        }
        // Everything queued is delivered: no signal needs more demand.
        island.run(usize::MAX);
        prop_assert!(!island.core.has_events());

        let log = log.lock().clone();
        let count = |s: &Sig| log.iter().filter(|x| *x == s).count();
        let down: Vec<&Sig> = log
            .iter()
            .filter(|s| matches!(s, Sig::OnPush | Sig::OnComplete | Sig::OnFailure))
            .collect();
        // 1.1 and one element in flight: every on_push answers a pull.
        prop_assert!(count(&Sig::OnPush) <= pulls);
        prop_assert!(count(&Sig::OnPull) <= pulls, "one on_pull per request");
        // 1.7: at most one terminal signal, and nothing after it.
        let terminals = down.iter().filter(|s| ***s != Sig::OnPush).count();
        prop_assert!(terminals <= 1, "{log:?}");
        if terminals == 1 {
            prop_assert!(*down[down.len() - 1] != Sig::OnPush, "{log:?}");
        }
        // 1.8: nothing reaches downstream after it cancelled.
        if let Some(at) = log.iter().position(|s| *s == Sig::Cancelled) {
            prop_assert!(log[at..].iter().all(|s| matches!(s, Sig::Cancelled | Sig::OnPull | Sig::OnCancel)), "{log:?}");
            // 3.12: upstream hears of the cancel once, unless it closed
            // before the cancel reached it; no request reaches it afterwards.
            let up_cancel = log.iter().position(|s| *s == Sig::OnCancel);
            prop_assert!(count(&Sig::OnCancel) <= 1);
            if let Some(c) = up_cancel {
                prop_assert!(log[c..].iter().all(|s| *s != Sig::OnPull), "{log:?}");
            } else {
                prop_assert!(up_closed, "the cancel reaches upstream: {log:?}");
            }
        } else {
            // 1.4, 1.5, 2.9, 2.10: a terminal signal arrives, demand or not,
            // after every element pushed before it; elements arrive in order.
            prop_assert_eq!(count(&Sig::OnPush), pushed.len(), "{:?}", log);
            // In order (a pull without a grab drops the element, as in
            // Akka, so what is grabbed is a subsequence of what was pushed).
            let mut rest = pushed.iter();
            prop_assert!(grabbed.iter().all(|g| rest.any(|p| p == g)), "{:?} from {:?}", grabbed, pushed);
            match &closed {
                Some(sig) => prop_assert_eq!(down.last().copied(), Some(sig)),
                None => prop_assert_eq!(terminals, 0),
            }
            prop_assert_eq!(count(&Sig::OnCancel), 0);
        }
    }
}

/// `emit`'s queue and the state bit that mirrors it (`EMITTING`): a push
/// is refused while emits are queued, even with demand; the bit clears
/// when the queue drains, when the outlet fails, and when a cancel is
/// delivered; a completion waits for the queue.
#[test]
fn queued_emits_hold_off_a_push_until_drained_failed_or_cancelled() {
    let signals = |log: &Log| log.lock().clone();

    // Drained: two queued, the first pushed on a pull, the second still
    // queued when the next pull arrives: a push then is refused.
    let log: Log = Arc::default();
    let mut isl = island(&log);
    ctx(&mut isl, 0).emit(OUT, 1).unwrap();
    ctx(&mut isl, 0).emit(OUT, 2).unwrap();
    ctx(&mut isl, 1).pull(IN).unwrap();
    isl.run(usize::MAX);
    assert_eq!(ctx(&mut isl, 1).grab(IN), Ok(1));
    ctx(&mut isl, 1).pull(IN).unwrap();
    assert!(
        ctx(&mut isl, 0).push(OUT, 9).is_err(),
        "a push overtaking a queued emit"
    );
    isl.run(usize::MAX);
    assert_eq!(ctx(&mut isl, 1).grab(IN), Ok(2));
    ctx(&mut isl, 1).pull(IN).unwrap();
    isl.run(usize::MAX);
    assert_eq!(
        ctx(&mut isl, 0).push(OUT, 3),
        Ok(()),
        "the drained queue lets pushes through"
    );
    isl.run(usize::MAX);
    assert_eq!(ctx(&mut isl, 1).grab(IN), Ok(3));

    // Cancelled: once the cancel is delivered, pushes and emits are absorbed.
    let log: Log = Arc::default();
    let mut isl = island(&log);
    ctx(&mut isl, 0).emit(OUT, 1).unwrap();
    ctx(&mut isl, 1).cancel(IN);
    isl.run(usize::MAX);
    assert_eq!(ctx(&mut isl, 0).push(OUT, 2), Ok(()));
    assert_eq!(ctx(&mut isl, 0).emit(OUT, 3), Ok(()));
    assert_eq!(signals(&log), [Sig::OnCancel]);

    // Failed: the queue is dropped, the failure goes at once.
    let log: Log = Arc::default();
    let mut isl = island(&log);
    ctx(&mut isl, 0).emit(OUT, 1).unwrap();
    ctx(&mut isl, 0).fail(OUT, StreamError::msg("up failed"));
    ctx(&mut isl, 1).pull(IN).unwrap();
    isl.run(usize::MAX);
    assert!(ctx(&mut isl, 0).emit(OUT, 2).is_err());
    assert_eq!(signals(&log), [Sig::OnFailure]);

    // Completed: the completion follows the last queued emit.
    let log: Log = Arc::default();
    let mut isl = island(&log);
    ctx(&mut isl, 0).emit(OUT, 1).unwrap();
    ctx(&mut isl, 0).complete(OUT);
    isl.run(usize::MAX);
    assert_eq!(signals(&log), []);
    ctx(&mut isl, 1).pull(IN).unwrap();
    isl.run(usize::MAX);
    assert_eq!(signals(&log), [Sig::OnPush, Sig::OnComplete]);
}
