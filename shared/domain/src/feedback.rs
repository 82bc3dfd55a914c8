//! Feedback: a channel's labels read with the grounds of the posts they are
//! about, and the tuning they come to, for people (`myao feedback`).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::grounds::{Grounds, PostGrounds};
use crate::hints::Hint;
use crate::labels::{tuning_of, Label};
use crate::{ChannelId, Ts};

/// One of the bot's posts with the hints people gave on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelledPost {
    pub post: Ts,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_ts: Option<Ts>,
    /// What the judge knew when it decided the post; `None` when it was
    /// not kept (a post of an earlier version, or past its days).
    pub grounds: Option<Grounds>,
    /// The hints, in the order given.
    pub labels: Vec<Label>,
}

impl LabelledPost {
    /// Positive hints less negative ones (a mute counts as negative).
    pub fn balance(&self) -> i32 {
        self.labels
            .iter()
            .map(|l| match l.hint {
                Hint::Positive => 1,
                Hint::Negative | Hint::Mute { .. } => -1,
            })
            .sum()
    }
}

/// A channel's feedback: its tuning now and its labelled posts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelFeedback {
    pub channel: ChannelId,
    /// The tuning in one line ([`crate::tuning::Tuning::explain`]).
    pub tuning: String,
    /// The offset on its thresholds now, in score points.
    pub offset: i32,
    /// When a mute ends, while one holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub muted_until: Option<DateTime<Utc>>,
    /// Its labelled posts, newest first.
    pub posts: Vec<LabelledPost>,
}

/// The feedback of `channel` at `now` from its labels and its posts'
/// grounds: each labelled post with its grounds, newest first. Grounds of a
/// post no one gave a hint on are left out.
pub fn channel_feedback(
    channel: &ChannelId,
    labels: &[Label],
    grounds: &[PostGrounds],
    now: DateTime<Utc>,
) -> ChannelFeedback {
    let mut posts: Vec<LabelledPost> = Vec::new();
    let mut given: Vec<&Label> = labels.iter().filter(|l| &l.channel == channel).collect();
    given.sort_by_key(|l| l.at);
    for label in given {
        match posts.iter_mut().find(|p| p.post == label.post) {
            Some(post) => post.labels.push(label.clone()),
            None => {
                let kept = grounds
                    .iter()
                    .find(|g| &g.channel == channel && g.post == label.post);
                posts.push(LabelledPost {
                    post: label.post,
                    thread_ts: kept.and_then(|g| g.thread_ts),
                    grounds: kept.map(|g| g.grounds.clone()),
                    labels: vec![label.clone()],
                });
            }
        }
    }
    posts.sort_by_key(|p| std::cmp::Reverse(p.post));
    let own: Vec<Label> = labels
        .iter()
        .filter(|l| &l.channel == channel)
        .cloned()
        .collect();
    let tuning = tuning_of(&own, now);
    ChannelFeedback {
        channel: channel.clone(),
        tuning: tuning.explain(now),
        offset: tuning.offset(now),
        muted_until: tuning.muted_until(now),
        posts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::Source;
    use crate::reply::EmojiName;
    use crate::rules::Chattiness;
    use crate::UserId;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    fn label(post: &str, user: &str, hint: Hint, secs: i64) -> Label {
        Label {
            channel: ChannelId::parse("C1").unwrap(),
            post: Ts::parse(post).unwrap(),
            user: UserId::parse(user).unwrap(),
            hint,
            source: Source::Reaction(EmojiName::parse("-1").unwrap()),
            at: at(secs),
        }
    }

    #[test]
    fn labels_are_grouped_by_post_with_its_grounds_newest_post_first() {
        let channel = ChannelId::parse("C1").unwrap();
        let labels = vec![
            label("1000.000100", "U1", Hint::Negative, 2_000),
            label("2000.000100", "U1", Hint::Positive, 3_000),
            label("1000.000100", "U2", Hint::Negative, 2_500),
        ];
        let grounds = vec![PostGrounds {
            channel: channel.clone(),
            post: Ts::parse("1000.000100").unwrap(),
            thread_ts: None,
            grounds: Grounds::unjudged(crate::grounds::Spoke::RuleYes, Chattiness::Normal),
            at: at(1_000),
        }];
        let feedback = channel_feedback(&channel, &labels, &grounds, at(4_000));
        let posts: Vec<(String, usize, i32, bool)> = feedback
            .posts
            .iter()
            .map(|p| {
                let post = p.post.to_string();
                (post, p.labels.len(), p.balance(), p.grounds.is_some())
            })
            .collect();
        assert_eq!(
            posts,
            [
                ("2000.000100".to_owned(), 1, 1, false),
                ("1000.000100".to_owned(), 2, -2, true)
            ]
        );
        // U1 down, then up: U1's latest is up; U2 down: they even out.
        assert_eq!(feedback.offset, 0);
        assert_eq!(feedback.tuning, "tuned=0");
        assert_eq!(feedback.muted_until, None);
    }

    #[test]
    fn a_channel_with_no_labels_has_no_posts_and_no_tuning() {
        let channel = ChannelId::parse("C2").unwrap();
        let feedback = channel_feedback(&channel, &[], &[], at(4_000));
        assert!(feedback.posts.is_empty());
        assert_eq!(feedback.offset, 0);
    }
}
