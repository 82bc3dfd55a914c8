//! The files a reply opens. With `vision` on, the images shared in the
//! newest messages of the conversation it answers are downloaded (with the
//! bot token) and given to the reply model, and each image's line in the
//! prompt says what became of it: attached as image n, too large, or
//! unreadable. Other files stay named and unopened. Only the conversation
//! being answered is looked at, so a prompt shows no file from elsewhere.

use super::{JobContext, Services};
use crate::domain::files::{FileState, Image, ImageFormat, SharedFile};
use crate::domain::{Context, Ts};

/// The most images one reply is shown.
pub const MAX_IMAGES: usize = 4;
/// How many of the conversation's newest messages are looked through.
const RECENT_MESSAGES: usize = 10;

/// Opens the images of `context`'s conversation for the reply model and
/// says on their lines what became of each; returns the images, numbered
/// as the lines say. Nothing without `vision`. Fails soft: a file that
/// cannot be read is named as such, never a lost reply.
pub async fn open(cx: &JobContext<'_>, context: &mut Context) -> Vec<Image> {
    let (svc, settings) = (cx.svc, &*cx.settings);
    if !settings.vision {
        return Vec::new();
    }
    let target = context.target_thread_ts().copied();
    // The newest first, so that the images kept are the latest ones.
    let mut wanted: Vec<(Ts, usize, SharedFile)> = Vec::new();
    {
        let messages = context.conversation_history().conversation(target.as_ref());
        'newest: for message in messages.iter().rev().take(RECENT_MESSAGES) {
            for (index, file) in message.files.iter().enumerate() {
                if file.image_format().is_some() {
                    if wanted.len() == MAX_IMAGES {
                        break 'newest;
                    }
                    wanted.push((message.ts, index, file.clone()));
                }
            }
        }
    }
    // In the prompt's order (oldest first): image 1 is the first one shown.
    wanted.reverse();
    let max_bytes = u64::from(settings.vision_max_bytes);
    let mut images = Vec::new();
    for (ts, index, file) in wanted {
        let state = if file.size.is_some_and(|size| size > max_bytes) {
            FileState::TooLarge
        } else {
            match fetch(svc, file.url.as_deref(), max_bytes).await {
                Some((format, bytes)) => {
                    images.push(Image { format, bytes });
                    FileState::Attached(images.len())
                }
                None => FileState::Unreadable,
            }
        };
        context.restate_file(ts, index, state);
    }
    images
}

/// The image at `url`, if its bytes are an image's (whatever it was called).
async fn fetch(
    svc: &Services,
    url: Option<&str>,
    max_bytes: u64,
) -> Option<(ImageFormat, Vec<u8>)> {
    let Some(url) = url else {
        tracing::warn!("a shared image has no download address");
        return None;
    };
    match svc.slack.download(url, max_bytes).await {
        Ok(bytes) => match ImageFormat::sniff(&bytes) {
            Some(format) => Some((format, bytes)),
            None => {
                tracing::warn!(bytes = bytes.len(), "a shared image is not one");
                None
            }
        },
        Err(error) => {
            tracing::warn!(%error, "could not download a shared image");
            None
        }
    }
}
