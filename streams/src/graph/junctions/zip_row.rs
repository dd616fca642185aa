//! The one zip logic behind every zip junction ([`Zip`](super::Zip),
//! [`ZipWith`](super::ZipWith), [`ZipN`](super::ZipN),
//! [`ZipWithN`](super::ZipWithN), [`ZipWith3`](super::ZipWith3) ..
//! [`ZipWith5`](super::ZipWith5)): one element of each input makes a
//! row (a tuple of the inputs' types, or an array), and the junction's
//! function turns the row into its output.
//!
//! The logic, as Akka's `ZipWith` (but pulling on demand, not ahead):
//!
//! - **pull**: downstream's pull pulls every input that has neither been
//!   pulled nor has an element waiting (no input runs ahead by more
//!   than one element);
//! - **push**: when every input has an element, they are grabbed as one
//!   row and its output pushed;
//! - **completion**: an input that completes with no element waiting
//!   completes the stage at once (cancelling the others, whose waiting
//!   elements are dropped); one that completes with its element waiting
//!   completes the stage right after that element's row;
//! - **failure** of any input fails the stage; **cancellation** from
//!   downstream cancels every input (the defaults).

use std::marker::PhantomData;

use crate::error::StreamError;
use crate::stage::{GraphStageLogic, InPort, Inlet, OutPort, Outlet, StageContext, StageResult};

/// The inputs of a zip as the row one element of each makes.
pub(crate) trait ZipRow: Sized + Send + 'static {
    /// How many inputs (the stage's inlets `0..WIDTH`).
    const WIDTH: u16;

    /// One element of each input, every one of which has one waiting.
    fn grab(ctx: &mut StageContext<'_>) -> Result<Self, StreamError>;
}

impl<T: Send + 'static, const N: usize> ZipRow for [T; N] {
    const WIDTH: u16 = {
        assert!(N <= u16::MAX as usize, "a shape has at most 65535 inlets");
        N as u16
    };

    fn grab(ctx: &mut StageContext<'_>) -> Result<Self, StreamError> {
        let mut items: [Option<T>; N] = std::array::from_fn(|_| None);
        for (port, item) in (0u16..).zip(items.iter_mut()) {
            *item = Some(ctx.grab(Inlet::<T>::new(port))?);
        }
        Ok(items.map(|item| item.expect("every input had an element")))
    }
}

/// A tuple of the inputs' element types as a row.
macro_rules! tuple_row {
    ($width:literal: $($t:ident = $i:literal),+) => {
        impl<$($t: Send + 'static),+> ZipRow for ($($t,)+) {
            const WIDTH: u16 = $width;

            fn grab(ctx: &mut StageContext<'_>) -> Result<Self, StreamError> {
                Ok(($(ctx.grab(Inlet::<$t>::new($i))?,)+))
            }
        }
    };
}

tuple_row!(2: A = 0, B = 1);
tuple_row!(3: A = 0, B = 1, C = 2);
tuple_row!(4: A = 0, B = 1, C = 2, D = 3);
tuple_row!(5: A = 0, B = 1, C = 2, D = 3, E = 4);

/// The running zip over rows `R`, combined by `f` into `O`s.
pub(super) struct ZipLogic<R, O, F> {
    f: F,
    out: Outlet<O>,
    /// An input completed while its element waited: complete after it.
    finishing: bool,
    /// Inputs with an element waiting: each input is pulled once per
    /// row, so a row is complete when all have (counting, not asking
    /// every input on every push, keeps a zip of thousands linear).
    waiting: u16,
    _row: PhantomData<fn() -> R>,
}

impl<R: ZipRow, O: Send + 'static, F: FnMut(R) -> O + Send + 'static> ZipLogic<R, O, F> {
    /// The logic of a zip stage with inlets `0..R::WIDTH` and outlet 0.
    pub(super) fn boxed(f: F) -> Box<dyn GraphStageLogic> {
        Box::new(Self {
            f,
            out: Outlet::new(0),
            finishing: false,
            waiting: 0,
            _row: PhantomData,
        })
    }

    /// The inlets, for the port operations that ignore the element type.
    fn inlets() -> impl Iterator<Item = Inlet<()>> {
        (0..R::WIDTH).map(Inlet::new)
    }
}

impl<R, O, F> GraphStageLogic for ZipLogic<R, O, F>
where
    R: ZipRow,
    O: Send + 'static,
    F: FnMut(R) -> O + Send + 'static,
{
    fn pre_start(&mut self, ctx: &mut StageContext<'_>) -> StageResult {
        // No inputs: no row will ever be complete.
        if R::WIDTH == 0 {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        self.waiting += 1;
        if self.waiting < R::WIDTH {
            return Ok(());
        }
        debug_assert!(Self::inlets().all(|inlet| ctx.is_available(inlet)));
        self.waiting = 0;
        let row = R::grab(ctx)?;
        ctx.push(self.out, (self.f)(row))?;
        if self.finishing || Self::inlets().any(|inlet| ctx.is_closed(inlet)) {
            ctx.complete_stage();
        }
        Ok(())
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        for inlet in Self::inlets() {
            if !ctx.has_been_pulled(inlet) && !ctx.is_available(inlet) {
                ctx.pull(inlet)?;
            }
        }
        Ok(())
    }

    fn on_upstream_finish(&mut self, port: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        if ctx.is_available(Inlet::<()>::new(port.0)) {
            self.finishing = true;
        } else {
            ctx.complete_stage();
        }
        Ok(())
    }
}
