//! After terminate, no thread the system started is left (one test per binary, so the count is exact).

// Counts threads in /proc.
#![cfg(target_os = "linux")]

use weir_actor::{Actor, ActorSystem, Context, DispatcherKind, Props};
use weir_tests::{eventually, shutdown};

struct Pinned;
impl Actor for Pinned {
    type Msg = ();
    fn receive(&mut self, _: &mut Context<Self>, _: ()) {}
}

fn live_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn terminate_leaves_no_thread_running() {
    let before = live_threads();
    let system = ActorSystem::builder()
        .name("threads")
        .threads(3)
        .build()
        .unwrap();
    for i in 0..3 {
        let a = system
            .spawn(
                Props::new(|| Pinned).with_dispatcher(DispatcherKind::Pinned),
                &format!("p{i}"),
            )
            .unwrap();
        a.tell(());
    }
    // 3 workers + 1 scheduler + 3 pinned.
    assert!(
        live_threads() >= before + 7,
        "threads started: {} -> {}",
        before,
        live_threads()
    );
    shutdown(&system);
    // A joined thread can stay listed in /proc for a moment while the
    // kernel tears it down; a thread left running never settles.
    assert!(
        eventually(std::time::Duration::from_secs(1), || live_threads()
            == before),
        "every system thread has been joined ({} -> {})",
        before,
        live_threads()
    );
}
