//! The fused form of [`OrElse`](crate::graph::OrElse): the primary input,
//! or the secondary if the primary ends without an element.

use std::task::Context;

use super::super::iter::{BoxChunks, Chunks, Fill};

/// The primary input's elements; once it has made one, the secondary is
/// dropped (the stage cancels it then); if the primary ends empty, the
/// secondary's elements. The secondary is asked for nothing before it is
/// needed, so its failure matters only then (as in the stage).
pub(super) struct OrElseChunks<T> {
    primary: BoxChunks<T>,
    /// `None` once the primary has made an element.
    secondary: Option<BoxChunks<T>>,
    /// The primary ended empty: the secondary is in use.
    switched: bool,
}

impl<T> OrElseChunks<T> {
    /// Over `[primary, secondary]`.
    pub(super) fn new(sources: Vec<BoxChunks<T>>) -> Self {
        let [primary, secondary]: [BoxChunks<T>; 2] = sources
            .try_into()
            .unwrap_or_else(|_| unreachable!("or_else has two inputs"));
        Self {
            primary,
            secondary: Some(secondary),
            switched: false,
        }
    }
}

impl<T: Send> Chunks<T> for OrElseChunks<T> {
    fn fill(&mut self, cx: &mut Context<'_>, out: &mut Vec<T>, max: usize) -> Fill {
        if !self.switched {
            let before = out.len();
            let fill = self.primary.fill(cx, out, max);
            if out.len() > before {
                self.secondary = None;
            }
            match fill {
                Fill::Exhausted if self.secondary.is_some() => self.switched = true,
                other => return other,
            }
        }
        // Nothing was appended above: the primary ended empty.
        match &mut self.secondary {
            Some(secondary) => secondary.fill(cx, out, max),
            None => Fill::Exhausted,
        }
    }

    fn is_exhausted(&self) -> bool {
        match &self.secondary {
            // The primary made an element: it alone is left.
            None => self.primary.is_exhausted(),
            Some(secondary) => {
                (self.switched || self.primary.is_exhausted()) && secondary.is_exhausted()
            }
        }
    }

    fn at_least(&self) -> usize {
        match &self.secondary {
            Some(secondary) if self.switched || self.primary.is_exhausted() => secondary.at_least(),
            // The primary's elements, if it is sure to make any, are all
            // there will be.
            _ => self.primary.at_least(),
        }
    }
}
