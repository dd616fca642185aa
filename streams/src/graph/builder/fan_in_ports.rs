//! The typed ports of the three- to five-input fan-in shapes in a
//! [`GraphBuilder`](super::GraphBuilder).

use super::{In, Out, StagePorts};
use crate::stage::{FanInShape3, FanInShape4, FanInShape5};

/// `in0()` .. and `out()` on the ports of a fan-in shape whose inlets
/// each have their own type.
macro_rules! fan_in_ports {
    ($shape:ident, $($in:ident: $t:ident = $i:literal),+) => {
        impl<$($t,)+ O> StagePorts<$shape<$($t,)+ O>> {
            $(
                #[doc = concat!("Inlet ", stringify!($i), ".")]
                pub fn $in(&self) -> In<$t> {
                    self.in_at($i)
                }
            )+
            /// The outlet.
            pub fn out(&self) -> Out<O> {
                self.out_at(0)
            }
        }
    };
}

fan_in_ports!(FanInShape3, in0: A = 0, in1: B = 1, in2: C = 2);
fan_in_ports!(FanInShape4, in0: A = 0, in1: B = 1, in2: C = 2, in3: D = 3);
fan_in_ports!(FanInShape5, in0: A = 0, in1: B = 1, in2: C = 2, in3: D = 3, in4: E = 4);
