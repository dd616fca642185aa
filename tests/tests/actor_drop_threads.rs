//! Create-and-drop cycles of an `ActorSystem` leave no thread behind (one test per binary, so the count is exact).

// Counts threads in /proc.
#![cfg(target_os = "linux")]

use std::time::Duration;

use weir_actor::{Actor, ActorRef, ActorSystem, Context, DispatcherKind, Props, ask};
use weir_tests::{PATIENCE, eventually};

struct Echo;
impl Actor for Echo {
    type Msg = ActorRef<u32>;
    fn receive(&mut self, _: &mut Context<Self>, reply: ActorRef<u32>) {
        reply.tell(7);
    }
}

/// How long a joined thread may still show in /proc/self/task.
const SETTLE: Duration = Duration::from_secs(1);

fn live_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn create_and_drop_cycles_leave_no_thread_behind() {
    let before = live_threads();
    for i in 0..20 {
        let system = ActorSystem::builder()
            .name(format!("cycle{i}"))
            .threads(3)
            .build()
            .unwrap();
        let shared = system.spawn(Props::new(|| Echo), "echo").unwrap();
        let pinned = system
            .spawn(
                Props::new(|| Echo).with_dispatcher(DispatcherKind::Pinned),
                "pinned",
            )
            .unwrap();
        assert_eq!(ask(&shared, |r| r, PATIENCE).wait(), Ok(7));
        assert_eq!(ask(&pinned, |r| r, PATIENCE).wait(), Ok(7));
        assert!(
            live_threads() >= before + 5,
            "3 workers, a scheduler and a pinned thread run"
        );
        // No `terminate`: the drop of the last handle does it all.
        drop(system);
        // A joined thread can stay listed in /proc for a moment while the
        // kernel tears it down (join returns when its tid is cleared), so
        // allow a short settling time; a thread left running never settles.
        assert!(
            eventually(SETTLE, || live_threads() == before),
            "cycle {i}: every thread joined by the drop ({} left over)",
            live_threads() - before
        );
    }
    // Nothing is left to exit late either.
    assert!(!eventually(Duration::from_millis(100), || live_threads() != before));
}
