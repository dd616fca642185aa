//! Stage actors: an `ActorRef` whose messages a stage handles, on its island.

use std::sync::Arc;

use weir_actor::{ActorHandle, ActorRef, ActorSystem, FunctionRef, Terminated};

use super::AsyncCallback;

/// What a stage actor's handler receives.
#[derive(Debug)]
pub enum StageActorMessage<M> {
    /// A message told to the stage actor.
    Message(M),
    /// An actor the stage actor watches has terminated.
    Terminated(Terminated),
}

/// A stage's own actor reference, made with
/// [`StageContext::stage_actor`](super::StageContext::stage_actor) or
/// [`MatContext::stage_actor`](crate::stage::MatContext::stage_actor).
/// Its messages are handled inside the stage, on the island, in order;
/// it can watch actors; it terminates (watchers are told) when the stage
/// stops. Lifecycle signals (`stop`, `poison_pill`) sent to it are ignored
/// with a dead letter: it is not a real actor.
pub struct StageActor<M: Send + 'static> {
    function: Arc<FunctionRef<M>>,
}

impl<M: Send + 'static> Clone for StageActor<M> {
    fn clone(&self) -> Self {
        Self {
            function: Arc::clone(&self.function),
        }
    }
}

impl<M: Send + 'static> StageActor<M> {
    /// The reference to hand out (the same one each time).
    pub fn actor_ref(&self) -> ActorRef<M> {
        self.function.actor_ref()
    }

    /// Watch `target`: its termination arrives as [`StageActorMessage::Terminated`]
    /// (at once if it has already terminated).
    pub fn watch(&self, target: impl Into<ActorHandle>) {
        self.function.watch(target);
    }

    /// Stop watching `target`.
    pub fn unwatch(&self, target: impl Into<ActorHandle>) {
        self.function.unwatch(target);
    }
}

impl<M: Send + 'static> std::fmt::Debug for StageActor<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageActor")
            .field("function", &self.function)
            .finish()
    }
}

/// A stage actor whose messages go to `callback`; it stops when the
/// stage finishes (through `on_finish`).
pub(crate) fn make_stage_actor<M: Send + 'static>(
    system: &ActorSystem,
    stage_name: &str,
    callback: AsyncCallback<StageActorMessage<M>>,
    on_finish: &mut Vec<Box<dyn FnOnce() + Send>>,
) -> StageActor<M> {
    let name = actor_name_for(stage_name, "stage") + "-stageActor";
    let (messages, notices) = (callback.clone(), callback);
    let function = FunctionRef::with_death_watch(
        system,
        &name,
        move |message: M| {
            messages.invoke(StageActorMessage::Message(message));
            Ok(())
        },
        move |terminated| notices.invoke(StageActorMessage::Terminated(terminated)),
    )
    .expect("actor_name_for gives valid actor names");
    let function = Arc::new(function);
    let stopper = Arc::clone(&function);
    on_finish.push(Box::new(move || stopper.stop()));
    StageActor { function }
}

/// The actor name for a reference a stage hands out: `label` (the stage's
/// name, any text: `.named("my parser")`, `.named("")`) with every
/// character actor names do not take as `_`, or `fallback` (the stage
/// kind's name) when `label` is empty. Stage names are labels, not actor
/// names, so every label is accepted and still names a valid reference.
pub(crate) fn actor_name_for(label: &str, fallback: &'static str) -> String {
    let label = if label.is_empty() { fallback } else { label };
    name_chars(label).collect()
}

/// `label`'s characters with every one that actor names do not take as
/// `_`: the one mapping from stage labels to actor names (references here,
/// island names in `interpreter::task`).
pub(crate) fn name_chars(label: &str) -> impl Iterator<Item = char> + '_ {
    label.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            c
        } else {
            '_'
        }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::actor_name_for;

    proptest! {
        /// Whatever a stage is named, the name of its reference is valid
        /// (so `FunctionRef::new` cannot fail on it).
        #[test]
        fn every_label_names_a_valid_reference(label in any::<String>()) {
            let name = actor_name_for(&label, "actor_ref");
            prop_assert_eq!(weir_actor::validate_name(&name), Ok(()));
            prop_assert_eq!(weir_actor::validate_name(&format!("{name}-stageActor")), Ok(()));
        }
    }

    #[test]
    fn an_empty_label_takes_the_fallback() {
        assert_eq!(actor_name_for("", "actor_ref"), "actor_ref");
        assert_eq!(actor_name_for("my parser/1", "actor_ref"), "my_parser_1");
        assert_eq!(actor_name_for("$x", "actor_ref"), "_x");
    }
}
