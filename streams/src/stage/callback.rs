//! [`AsyncCallback`]: a handle that runs a handler inside its stage later.

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use super::core::{Handler, Host};
use super::{GraphStageLogic, IslandMsg, StageContext, StageResult};
use crate::error::StreamError;

/// A handle that runs a handler inside its stage, on the stage's island,
/// later. `Send`, `Sync` and cheap to clone: hand it to other threads,
/// futures or actors.
///
/// Safe to invoke at any time: before the island has started the value
/// waits in order in the island's mailbox; after the island has stopped it
/// becomes a dead letter; when the stage has stopped but the island has not,
/// the island publishes it as a dead letter (`DeadLetterReason::StageStopped`).
/// It never panics.
pub struct AsyncCallback<T> {
    host: super::IslandRef,
    stage: u32,
    handler: u32,
    _values: PhantomData<fn(T)>,
}

impl<T: Send + 'static> AsyncCallback<T> {
    /// Run the handler with `value` inside the stage.
    pub fn invoke(&self, value: T) {
        self.host.tell(IslandMsg::Async {
            stage: self.stage,
            handler: self.handler,
            payload: Box::new(value),
        });
    }
}

impl<T: Clone + Send + Sync + 'static> AsyncCallback<T> {
    /// A [`Waker`](std::task::Waker) that invokes this callback with
    /// `value`: a future or stream polled inside the stage wakes the stage
    /// this way (no polling loop). Made once, cloned freely.
    ///
    /// # Examples
    ///
    /// ```
    /// # use weir_streams::stage::AsyncCallback;
    /// fn waker_for(wake_me: &AsyncCallback<()>) -> std::task::Waker {
    ///     wake_me.waker(())
    /// }
    /// ```
    pub fn waker(&self, value: T) -> std::task::Waker {
        std::task::Waker::from(Arc::new(CallbackWaker {
            callback: self.clone(),
            value,
        }))
    }
}

struct CallbackWaker<T> {
    callback: AsyncCallback<T>,
    value: T,
}

impl<T: Clone + Send + Sync + 'static> std::task::Wake for CallbackWaker<T> {
    fn wake(self: Arc<Self>) {
        self.callback.invoke(self.value.clone());
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.callback.invoke(self.value.clone());
    }
}

impl<T> Clone for AsyncCallback<T> {
    fn clone(&self) -> Self {
        Self {
            host: self.host.clone(),
            stage: self.stage,
            handler: self.handler,
            _values: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for AsyncCallback<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncCallback")
            .field("island", &self.host.name())
            .field("stage", &self.stage)
            .finish()
    }
}

pub(crate) fn make_callback<L, T, F>(
    host: &Host,
    stage: u32,
    handlers: &mut Vec<Option<Handler>>,
    mut handler: F,
) -> AsyncCallback<T>
where
    L: GraphStageLogic,
    T: Send + 'static,
    F: FnMut(&mut L, T, &mut StageContext<'_>) -> StageResult + Send + 'static,
{
    let erased: Handler = Box::new(
        move |logic: &mut dyn GraphStageLogic, payload: Box<dyn Any + Send>, ctx| {
            let logic: &mut dyn Any = logic;
            let logic = logic.downcast_mut::<L>().ok_or_else(|| {
                StreamError::protocol("async callback registered for another logic type")
            })?;
            let value = payload
                .downcast::<T>()
                .expect("callback payload has the callback's type");
            handler(logic, *value, ctx)
        },
    );
    let index = u32::try_from(handlers.len()).expect("fewer than 2^32 callbacks per stage");
    handlers.push(Some(erased));
    AsyncCallback {
        host: host.island.clone(),
        stage,
        handler: index,
        _values: PhantomData,
    }
}
