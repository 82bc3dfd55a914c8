//! Writing a reply: its prompt (the conversation's context, or an
//! opening's channel), the LLM's answer, and what to do when there is none.

use myao_core::ports::{LlmRequest, PortError};
use myao_domain::text::{clean_reply, held_to};
use myao_domain::{Channel, ChannelId, Context, Reply, ResponseJob, UserId};

use super::outcome::{NoReply, ResponseOutcome};
use super::scene::{conversation_of, Scene};
use crate::context;
use crate::files::Opened;
use crate::prompts::{ContextPrompt, PromptError};
use crate::JobContext;

/// A reply written, or why not.
pub(super) enum Composed {
    Ready {
        bot: UserId,
        ch: Channel,
        text: String,
    },
    /// Nothing to post, for good (an unusable reply, a spend limit).
    Done(ResponseOutcome),
    /// Nothing yet: a redelivery may do better.
    Retry(PortError),
}

/// Writes the reply to `job`: the bot's id, the channel and the text, or
/// why not.
pub(super) async fn write(cx: &JobContext<'_>, job: &ResponseJob, scene: Scene) -> Composed {
    let (bot, ch, request, with_images) = match prepare(cx, job, scene).await {
        Ok(prepared) => prepared,
        Err(error) => {
            crate::limits::trip_on_token_refusal(cx, &error).await;
            return Composed::Retry(error);
        }
    };
    let mut written = write_reply(cx, request).await;
    // A model that refuses the images (a kind or a size it does not take):
    // the reply goes without them, each named as unreadable.
    if let (Err(WriteError::Unusable(NoReply::Llm(error))), Some((prompt, mut context, opened))) =
        (&written, with_images)
    {
        tracing::warn!(%error, "the reply model refused the images; writing without them");
        opened.withdraw(&mut context);
        written = write_reply(cx, prompt.request(&context, cx.settings(), cx.now())).await;
    }
    match written {
        Ok(text) => Composed::Ready { bot, ch, text },
        Err(WriteError::Retryable(error)) => {
            tracing::warn!(%error, "no reply written yet; the job will be redelivered");
            Composed::Retry(error)
        }
        Err(WriteError::OverBudget) => {
            Composed::Done(crate::limits::refused_by_budget(cx, job).await.into())
        }
        Err(WriteError::Unusable(why)) => {
            tracing::error!(reason = %why, "no reply written");
            Composed::Done(ResponseOutcome::NoReply(why))
        }
    }
}

/// A prompt with images, kept to write it again should the model refuse
/// them.
type WithImages = Option<(ContextPrompt, Context, Opened)>;

/// What writing the reply needs: the bot's id, the channel and the LLM
/// request. An opening draws on its channel alone, as its judgment did; a
/// reply on its conversation's context (built from its `scene`), with the
/// images of its files.
async fn prepare(
    cx: &JobContext<'_>,
    job: &ResponseJob,
    scene: Scene,
) -> Result<(UserId, Channel, Result<LlmRequest, PromptError>, WithImages), PortError> {
    let ResponseJob {
        channel,
        newest_ts,
        reply,
        ..
    } = job;
    let bot = cx.bot_user_id().await?;
    let ch = context::channel(cx, channel).await?;
    if let Reply::Opener { topic } = reply {
        let view = crate::proactive::view(cx, &ch).await?;
        return Ok((bot, ch, view.post_request(topic, cx.settings()), None));
    }
    let conversation = conversation_of(job);
    let read = scene.context_read(cx, ch.clone());
    let mut context = context::build_from(cx, &conversation, read, Some(*newest_ts)).await?;
    let mut opened = crate::files::open(cx, &mut context).await;
    let prompt = match reply {
        Reply::Short => ContextPrompt::ShortResponse,
        _ => ContextPrompt::Response,
    };
    let images = std::mem::take(&mut opened.images);
    let request = prompt
        .request(&context, cx.settings(), cx.now())
        .map(|request| LlmRequest { images, ..request });
    let with_images = match &request {
        Ok(r) if !r.images.is_empty() => Some((prompt, context, opened)),
        _ => None,
    };
    Ok((bot, ch, request, with_images))
}

/// The bot's id and the channel, for posting a reply an earlier try wrote
/// (both read by that try: cached, or in the store).
pub(super) async fn kept_context(
    cx: &JobContext<'_>,
    channel: &ChannelId,
) -> Result<(UserId, Channel), PortError> {
    let bot = match cx.bot_user_id().await {
        Ok(bot) => bot,
        Err(error) => {
            crate::limits::trip_on_token_refusal(cx, &error).await;
            return Err(error);
        }
    };
    Ok((bot, context::channel(cx, channel).await?))
}

/// Why no reply was written.
enum WriteError {
    /// The LLM was unavailable after its retries: worth a redelivery.
    Retryable(PortError),
    /// The LLM refused, or answered nothing usable.
    Unusable(NoReply),
    /// The day's LLM budget refused the call (`limits::CappedLlm`).
    OverBudget,
}

/// Asks the LLM for the reply to `request`, cleaned and held to
/// `max_reply_chars`.
async fn write_reply(
    cx: &JobContext<'_>,
    request: Result<myao_core::ports::LlmRequest, PromptError>,
) -> Result<String, WriteError> {
    let settings = cx.settings();
    let request = request.map_err(|e| WriteError::Unusable(e.into()))?;
    let reply = match cx.llm().complete(&request).await {
        Ok(reply) => reply,
        Err(error) if error.is_retryable() => return Err(WriteError::Retryable(error)),
        Err(error) if crate::limits::is_over_budget(&error) => return Err(WriteError::OverBudget),
        Err(error) => return Err(WriteError::Unusable(NoReply::Llm(error))),
    };
    let text = clean_reply(&reply.text, &settings.persona_name);
    if text.is_empty() {
        return Err(WriteError::Unusable(NoReply::Empty));
    }
    // As long as a person would write, cut at a sentence (before escaping).
    Ok(held_to(&text, settings.max_reply_chars as usize).to_owned())
}
