//! The run queue every dispatcher of a simulated system submits to.

use crate::dispatcher::Task;
use crate::sync::Mutex;

/// What the simulated system's dispatchers submit to: taken in submission
/// order by the driver, which picks among them with its seed. Submitting
/// is safe from any thread (work that leaves the simulation comes back
/// through it), but only submissions from the driving thread are ordered
/// by the seed.
#[derive(Default)]
pub(crate) struct RunQueue {
    submitted: Mutex<Vec<Task>>,
}

impl RunQueue {
    /// Queue `task` for the driver.
    pub(crate) fn submit(&self, task: Task) {
        self.submitted.lock().push(task);
    }

    /// Move what was submitted since the last call into `into`.
    pub(crate) fn take(&self, into: &mut Vec<Task>) {
        into.append(&mut self.submitted.lock());
    }
}
