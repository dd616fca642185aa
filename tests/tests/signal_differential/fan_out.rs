//! The model of a fan-out to two sink probes (`broadcast`, `balance`):
//! what each output sees, driven by its own requests and cancellation.
//!
//! - `broadcast` pulls upstream when every output still running has asked,
//!   and gives the element to each of them;
//! - `balance` (not waiting for all outputs) pulls upstream while an
//!   output waits and gives the element to the one that asked first; a
//!   pull stays outstanding when the output it was made for cancels (a
//!   pull cannot be taken back), and the element it brings is held for
//!   the next output that asks (nothing is lost; a completion waits
//!   behind it, a failure overtakes it);
//! - an end goes to every output still running; when all have cancelled,
//!   upstream is cancelled.

use std::collections::VecDeque;

use super::model::{BoxNode, Poll, World};
use super::script::{FanOut, Sig};

pub(crate) struct Outputs {
    kind: FanOut,
    demand: [u64; 2],
    done: [bool; 2],
    /// Outputs with a pull outstanding, in the order they pulled.
    waiting: VecDeque<usize>,
    /// `balance`: upstream was pulled and has not answered yet.
    pulled: bool,
    /// `balance`: an element that came for an output that cancelled.
    held: Option<u64>,
    ended: bool,
}

impl Outputs {
    pub(crate) fn new(kind: FanOut) -> Self {
        Outputs {
            kind,
            demand: [0; 2],
            done: [false; 2],
            waiting: VecDeque::new(),
            pulled: false,
            held: None,
            ended: false,
        }
    }

    pub(crate) fn request(&mut self, j: usize, n: u64) {
        if !self.done[j] {
            self.demand[j] += n;
        }
    }

    pub(crate) fn cancel(&mut self, j: usize, root: &mut BoxNode, w: &mut World) {
        if self.done[j] {
            return;
        }
        self.done[j] = true;
        self.demand[j] = 0;
        self.waiting.retain(|k| *k != j);
        if self.done == [true, true] && !self.ended {
            self.ended = true;
            root.cancel(w);
        }
    }

    fn end(&mut self, end: &Sig, down: &mut [Vec<Sig>; 2]) {
        for (done, down) in self.done.iter_mut().zip(down) {
            if !*done {
                down.push(end.clone());
                *done = true;
            }
        }
        self.ended = true;
    }

    /// Run until nothing more happens without a new step.
    pub(crate) fn settle(&mut self, root: &mut BoxNode, w: &mut World, down: &mut [Vec<Sig>; 2]) {
        while !self.ended {
            // Eager pulls ripple one stage per pass.
            for _ in 0..8 {
                root.pump(w);
            }
            for j in 0..2 {
                if !self.done[j] && self.demand[j] > 0 && !self.waiting.contains(&j) {
                    self.waiting.push_back(j);
                }
            }
            if let Some(x) = self.held {
                // Held for the next output that asks; a completion waits
                // behind it, a failure does not.
                let Some(j) = self.waiting.pop_front() else {
                    if let Some(end @ Sig::Error(_)) = root.end(w) {
                        self.held = None;
                        self.end(&end, down);
                    }
                    return;
                };
                self.held = None;
                down[j].push(Sig::Next(x));
                self.demand[j] -= 1;
                continue;
            }
            if let Some(end) = root.end(w) {
                self.end(&end, down);
                return;
            }
            let ready = match self.kind {
                FanOut::Broadcast => {
                    (0..2).all(|j| self.done[j] || self.waiting.contains(&j))
                        && !self.waiting.is_empty()
                }
                FanOut::Balance => !self.waiting.is_empty() || self.pulled,
            };
            if !ready {
                return;
            }
            let x = match root.pull(w) {
                Poll::Next(x) => x,
                Poll::End(end) => {
                    self.end(&end, down);
                    return;
                }
                Poll::Pending => {
                    self.pulled = true;
                    return;
                }
            };
            self.pulled = false;
            let to: Vec<usize> = match self.kind {
                FanOut::Broadcast => self.waiting.drain(..).collect(),
                FanOut::Balance => match self.waiting.pop_front() {
                    Some(j) => vec![j],
                    None => {
                        self.held = Some(x);
                        continue;
                    }
                },
            };
            for j in to {
                down[j].push(Sig::Next(x));
                self.demand[j] -= 1;
            }
        }
    }
}
