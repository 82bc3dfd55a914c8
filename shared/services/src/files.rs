//! The files a reply opens. With `vision` on, the images shared in the
//! newest messages of the conversation it answers are downloaded (with the
//! bot token) and given to the reply model, and each image's line in the
//! prompt says what became of it: attached as image n, too large, or
//! unreadable. Other files stay named and unopened. Only the conversation
//! being answered is looked at, so a prompt shows no file from elsewhere.

use super::JobContext;
use myao_core::ports::SlackApi;
use myao_domain::files::{self, FileState, Image, ImageFormat, SharedFile};
use myao_domain::{Context, Ts};

/// The most images one reply is shown.
pub const MAX_IMAGES: usize = 4;
/// How many of the conversation's newest messages are looked through.
const RECENT_MESSAGES: usize = 10;
/// The most bytes of images one reply downloads, all together: they are
/// held three times over (the bytes, their base64, the request body) in a
/// function of 512 MB that also holds the bundled embedder's models.
pub const MAX_TOTAL_BYTES: u64 = 12_000_000;
/// The longest the downloads of one reply take, all together: the time
/// left is the reply model's.
const DOWNLOAD_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// What a reply opened: the images, numbered as their lines say, and where
/// their lines are.
#[derive(Debug, Default)]
pub struct Opened {
    pub images: Vec<Image>,
    attached: Vec<(Ts, usize)>,
}

impl Opened {
    /// Takes the images back (a model that refused them): their lines say
    /// they could not be read, and no image goes.
    pub fn withdraw(self, context: &mut Context) {
        for (n, (ts, index)) in self.attached.into_iter().enumerate() {
            context.restate_file(ts, index, FileState::Attached(n + 1), FileState::Unreadable);
        }
    }
}

/// Opens the images of `context`'s conversation for the reply model and
/// says on their lines what became of each. Nothing without `vision`.
/// Fails soft: a file that cannot be read is named as such, never a lost
/// reply. A file whose line is no longer in its message's text (an edit
/// took it away) is not opened.
pub async fn open(cx: &JobContext<'_>, context: &mut Context) -> Opened {
    let settings = cx.settings();
    let mut opened = Opened::default();
    if !settings.vision {
        return opened;
    }
    let target = context.target_thread_ts().copied();
    // The newest first, so that the images kept are the latest ones.
    let mut wanted: Vec<(Ts, usize, SharedFile)> = Vec::new();
    {
        let messages = context.conversation_history().conversation(target.as_ref());
        'newest: for message in messages.iter().rev().take(RECENT_MESSAGES) {
            for (index, file) in message.files.iter().enumerate() {
                if file.image_format().is_some() && files::names(&message.text, file) {
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
    let mut left = MAX_TOTAL_BYTES;
    let started = tokio::time::Instant::now();
    for (ts, index, file) in wanted {
        let bound = max_bytes.min(left);
        let state = if file.size.is_some_and(|size| size > bound) {
            FileState::TooLarge
        } else {
            let time_left = DOWNLOAD_BUDGET.saturating_sub(started.elapsed());
            let fetched =
                tokio::time::timeout(time_left, fetch(cx.slack(), file.url.as_deref(), bound));
            match fetched.await {
                Ok(Some((format, bytes))) => {
                    left = left.saturating_sub(bytes.len() as u64);
                    opened.images.push(Image { format, bytes });
                    opened.attached.push((ts, index));
                    FileState::Attached(opened.images.len())
                }
                Ok(None) => FileState::Unreadable,
                Err(_) => {
                    tracing::warn!("no time left to download a shared image");
                    FileState::Unreadable
                }
            }
        };
        context.restate_file(ts, index, FileState::NotOpened, state);
    }
    opened
}

/// The image at `url`, if its bytes are an image's (whatever it was called).
async fn fetch(
    slack: &dyn SlackApi,
    url: Option<&str>,
    max_bytes: u64,
) -> Option<(ImageFormat, Vec<u8>)> {
    let Some(url) = url else {
        tracing::warn!("a shared image has no download address");
        return None;
    };
    match slack.download(url, max_bytes).await {
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
