//! The simple framing protocol's encoder: each message, prefixed with its
//! length.

use bytes::Bytes;

use super::length_field::encode_simple;
use crate::error::StreamError;
use crate::io::FramingError;
use crate::stage::{
    FlowShape, GraphStage, GraphStageLogic, InPort, MatContext, OutPort, StageContext, StageResult,
};

pub(crate) struct SimpleEncoder {
    pub(crate) maximum: usize,
}

struct SimpleEncoderLogic {
    shape: FlowShape<Bytes, Bytes>,
    maximum: usize,
    index: u64,
}

impl GraphStage for SimpleEncoder {
    type Shape = FlowShape<Bytes, Bytes>;
    type Mat = ();

    fn name(&self) -> &'static str {
        "simple-framing-encoder"
    }

    fn create_logic(&self, _: &mut MatContext<'_>) -> (Box<dyn GraphStageLogic>, ()) {
        let logic = SimpleEncoderLogic {
            shape: FlowShape::new(),
            maximum: self.maximum,
            index: 0,
        };
        (Box::new(logic), ())
    }
}

impl GraphStageLogic for SimpleEncoderLogic {
    fn on_push(&mut self, _: InPort, ctx: &mut StageContext<'_>) -> StageResult {
        let message = ctx.grab(self.shape.inlet)?;
        if message.len() > self.maximum {
            return Err(StreamError::custom(FramingError::MessageTooLong {
                offset: self.index,
                length: message.len(),
                maximum: self.maximum,
            }));
        }
        self.index += 1;
        ctx.push(self.shape.out, encode_simple(&message))
    }

    fn on_pull(&mut self, _: OutPort, ctx: &mut StageContext<'_>) -> StageResult {
        ctx.pull(self.shape.inlet)
    }
}
