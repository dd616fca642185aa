//! Starting a system's dispatchers: the shared pool, the named pools and
//! the timer, or, for a simulation, its run queue and clock.

use std::collections::HashMap;

use super::ActorSystemBuilder;
use crate::core::dispatcher::Dispatcher;
use crate::core::dispatcher::pool::Pool;
use crate::core::scheduler::Scheduler;
use crate::core::scheduler::wheel::TimerThread;
use crate::sync::Arc;
use crate::threads::Threads;

impl ActorSystemBuilder {
    /// Make the system a simulation's: every dispatcher submits to
    /// `queue`, every timer reads `clock`, and no thread is started.
    #[cfg(feature = "testkit")]
    pub(crate) fn simulate(
        mut self,
        queue: Arc<crate::core::dispatcher::simulated::RunQueue>,
        clock: crate::core::scheduler::TestClock,
    ) -> Self {
        self.simulated = Some(queue);
        self.clock = Some(clock);
        self
    }

    /// Start the shared pool, the named pools and the timer; on any failure,
    /// stop what was started. A simulated system starts no thread: every
    /// dispatcher is the simulation's run queue and its timer reads the
    /// simulation's clock.
    pub(super) fn start_dispatchers(
        &self,
        threads: &Arc<Threads>,
    ) -> std::io::Result<(Dispatcher, HashMap<&'static str, Dispatcher>, Scheduler)> {
        #[cfg(feature = "testkit")]
        if let Some(queue) = &self.simulated {
            let clock = self.clock.as_ref().expect("a simulation sets its clock");
            let named = self
                .pools
                .iter()
                .map(|&(name, _, _)| (name, Dispatcher::Simulated(queue.clone())))
                .collect();
            let scheduler = Scheduler::new(TimerThread::manual(clock));
            return Ok((Dispatcher::Simulated(queue.clone()), named, scheduler));
        }
        let mut started: Vec<Arc<Pool>> = Vec::new();
        let mut start = |threads_n: usize, name: String, deadline| {
            let pool = Pool::start(threads_n, &name, deadline, threads)?;
            started.push(pool.clone());
            Ok::<_, std::io::Error>(pool)
        };
        let pools = (|| {
            let pool = start(self.threads, self.name.clone(), self.throughput_deadline)?;
            let mut named = HashMap::new();
            for &(pool_name, n, deadline) in &self.pools {
                named.insert(
                    pool_name,
                    start(n, format!("{}-{pool_name}", self.name), deadline)?,
                );
            }
            let timer = Scheduler::new(TimerThread::start(
                format!("{}-scheduler", self.name),
                threads,
            )?);
            for p in std::iter::once(&pool).chain(named.values()) {
                p.set_timer(timer.clone());
            }
            let scheduler = timer.with_clock(self.clock.as_ref());
            Ok::<_, std::io::Error>((pool, named, scheduler))
        })();
        match pools {
            Ok((pool, named, scheduler)) => Ok((
                Dispatcher::Pool(pool),
                named
                    .into_iter()
                    .map(|(name, pool)| (name, Dispatcher::Pool(pool)))
                    .collect(),
                scheduler,
            )),
            Err(e) => {
                for pool in started {
                    pool.shutdown();
                }
                Err(e)
            }
        }
    }
}
