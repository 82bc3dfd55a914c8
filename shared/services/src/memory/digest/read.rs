//! What a digest reads once for all its calls ([`Read`]), apart from the
//! calls that use it.

use myao_core::ports::PortError;
use myao_domain::sketch::Sketch;
use myao_domain::{Channel, Message};

use crate::context::{prompt_names, Names};
use crate::JobContext;

/// What a digest reads once for all its calls (the first, its retry, and
/// one per further batch of threads): the names its messages show, and,
/// when it asks for facts, the sketches it may revise.
pub(super) struct Read<'c> {
    pub(super) channel: &'c Channel,
    pub(super) names: Names,
    /// Not one a deletion or an edit still being forgotten may be in: it
    /// is written anew.
    pub(super) sketched: Vec<Sketch>,
}

impl<'c> Read<'c> {
    pub(super) async fn of(
        cx: &JobContext<'_>,
        channel: &'c Channel,
        messages: &[Message],
        facts: bool,
    ) -> Result<Read<'c>, PortError> {
        let names = prompt_names(cx, messages.iter()).await?;
        let sketched = if facts {
            let pending = cx.store().forgets().await?;
            let mut all = cx.store().sketches(&channel.id).await?;
            all.retain(|s| !pending.iter().any(|f| s.may_hold(f)));
            all
        } else {
            Vec::new()
        };
        Ok(Read {
            channel,
            names,
            sketched,
        })
    }
}
